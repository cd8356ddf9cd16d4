package chaos

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func FuzzSchedule(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s, int64(90))
	}
	tg := targets{Push: []string{"m1", "m2"}, Pull: []string{"p1"}, NoScheduleGrace: 4 * time.Second, NoExecuteGrace: 10 * time.Second, LeaseDuration: 6 * time.Second,
		AgentProbeInterval: time.Second, AgentLeaseDuration: 4 * time.Second}
	f.Fuzz(func(t *testing.T, seed uint64, secs int64) {
		if secs < 1 || secs > 3600 {
			t.Skip()
		}
		d := time.Duration(secs) * time.Second
		got := schedule(seed, d, tg)
		if again := schedule(seed, d, tg); !reflect.DeepEqual(got, again) {
			t.Fatalf("seed %d gives two schedules:\n%v\n%v", seed, got, again)
		}
		for i, a := range got {
			if a.At < 0 || a.For <= 0 || a.At+a.For > d {
				t.Errorf("fault %v does not end within the run of %s", a, d)
			}
			if i > 0 && got[i-1].At > a.At {
				t.Errorf("faults out of order: %v before %v", got[i-1], a)
			}
			switch a.Kind {
			case cutMemberShort:
				if a.For >= tg.NoScheduleGrace {
					t.Errorf("%v: a short cut must end before the NoSchedule grace period (%s)", a, tg.NoScheduleGrace)
				}
			case killLeader, freezeLeader:
				if a.For <= tg.LeaseDuration {
					t.Errorf("%v: a killed leader must stay down beyond the lease (%s) for the other replica to take over", a, tg.LeaseDuration)
				}
			case cutMemberLong:
				if a.For <= tg.NoExecuteGrace {
					t.Errorf("%v: a long cut must outlast the NoExecute grace period (%s)", a, tg.NoExecuteGrace)
				}
			case skewAgentClock:
				if skew := max(a.Skew, -a.Skew); skew < 2*tg.AgentProbeInterval || skew > 3*tg.AgentLeaseDuration || !slices.Contains(tg.Pull, a.Target) {
					t.Errorf("%v: a Pull agent's clock must be off by two probe intervals (%s) or more, and at most three Lease durations (%s)", a, 2*tg.AgentProbeInterval, 3*tg.AgentLeaseDuration)
				}
			}
			if a.Kind != skewAgentClock && a.Skew != 0 {
				t.Errorf("%v: only a skew-agent-clock fault sets a clock off", a)
			}
			for _, b := range got[i+1:] {
				if a.Target == b.Target && b.At < a.At+a.For {
					t.Errorf("two faults hold %s at once: %v and %v", a.Target, a, b)
				}
			}
		}
	})
}

func TestScheduleCoversEveryFault(t *testing.T) {
	tg := targets{Push: []string{"m1", "m2"}, Pull: []string{"p1"}, NoScheduleGrace: 4 * time.Second, NoExecuteGrace: 10 * time.Second, LeaseDuration: 6 * time.Second,
		AgentProbeInterval: time.Second, AgentLeaseDuration: 4 * time.Second}
	seen := map[faultKind]bool{}
	for seed := range uint64(20) {
		for _, f := range schedule(seed, 90*time.Second, tg) {
			seen[f.Kind] = true
		}
	}
	for _, k := range []faultKind{killLeader, killAll, stopAgent, cutMemberShort, cutMemberLong, slowMember, flakyMember, cutHub, restartHub, freezeLeader,
		restartAgent, deleteWork, deleteBinding, deleteMemberObject, restartMember, slowHubEtcd, removeCRD, skewAgentClock} {
		if !seen[k] {
			t.Errorf("20 seeds of 90 s never schedule %s", k)
		}
	}
	if a, b := schedule(1, 90*time.Second, tg), schedule(2, 90*time.Second, tg); reflect.DeepEqual(a, b) {
		t.Errorf("seeds 1 and 2 give the same schedule: %v", a)
	}
}
