package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// faultKind is one way the fleet breaks.
type faultKind string

const (
	// killLeader SIGKILLs the controller-manager replica holding the
	// lease; the other takes over once the lease expires; the killed one
	// starts again later.
	killLeader faultKind = "kill-leader"
	// freezeLeader SIGSTOPs the replica holding the lease beyond the
	// lease, so the other takes over, then SIGCONTs it: a leader that
	// lost its lease without knowing it runs again, with its queues full,
	// and its fence must refuse every write it tries.
	freezeLeader faultKind = "freeze-leader"
	// killAll SIGKILLs both replicas: nothing acts until they restart.
	killAll faultKind = "kill-all-controllers"
	// stopAgent stops a Pull member's agent and starts it again.
	stopAgent faultKind = "stop-agent"
	// cutMemberShort cuts a Push member's API server off for less than
	// the NoSchedule grace period: nothing should move.
	cutMemberShort faultKind = "cut-member-short"
	// cutMemberLong cuts it off for longer than the NoExecute grace
	// period: its workloads fail over.
	cutMemberLong faultKind = "cut-member-long"
	// slowMember makes a member's API server answer late.
	slowMember faultKind = "slow-member"
	// flakyMember makes a member's API server drop connections.
	flakyMember faultKind = "flaky-member"
	// cutHub cuts the controllers off the hub's API server, as a restart
	// of it looks to them: every watch and request fails, then resumes.
	cutHub faultKind = "cut-hub"
	// restartHub stops the hub's API server and etcd and starts them
	// again on the same data and port: every client's watches and
	// requests fail, the writers' among them, and the stored objects stay.
	restartHub faultKind = "restart-hub"
	// restartAgent stops a Pull member's agent and starts it again at
	// once: whatever it was applying is cut off halfway.
	restartAgent faultKind = "restart-agent"
	// deleteWork deletes one of a cluster's Works by hand on the hub: its
	// copy goes from the member, and the binding controller writes the
	// Work again.
	deleteWork faultKind = "delete-work"
	// deleteBinding deletes a binding by hand on the hub: the detector
	// writes it again, and the scheduler places it anew.
	deleteBinding faultKind = "delete-binding"
	// deleteMemberObject deletes an object Shepherd applied, by hand in
	// the member: Shepherd puts it back.
	deleteMemberObject faultKind = "delete-member-object"
	// restartMember stops a member's API server and etcd and starts them
	// again on the same data and port, while its own controllers, kwok
	// and Shepherd keep running against it.
	restartMember faultKind = "restart-member"
	// slowHubEtcd delays every exchange between the hub's API server and
	// its etcd: every hub read and write is late.
	slowHubEtcd faultKind = "slow-hub-etcd"
	// removeCRD deletes, by hand in a member, the CRD of the workload's
	// custom kind (which Shepherd applied there), and with it every Widget
	// of the member: Shepherd puts the CRD back, then the Widgets.
	removeCRD faultKind = "remove-crd"
	// skewAgentClock restarts a Pull member's agent with its clock ahead
	// of the hub's or behind it (the fault's Skew), by two of the agent's
	// probe intervals up to three of its Lease durations, and
	// after For restarts it with the right clock: every time the agent
	// writes for the hub (the Cluster's lastProbeTime, the Works'
	// statusTime, its Lease's renewals) is off by the skew meanwhile, and
	// jumps by it at both restarts.
	skewAgentClock faultKind = "skew-agent-clock"
)

// fault is one scheduled fault: what, on which target, when (from the
// start of the run) and for how long.
type fault struct {
	Kind   faultKind
	Target string
	At     time.Duration
	For    time.Duration
	// Skew is how far a skew-agent-clock fault sets the agent's clock
	// off from the hub's: ahead when positive, behind when negative.
	Skew time.Duration
}

func (f fault) String() string {
	s := fmt.Sprintf("%6.1fs +%5.1fs %-21s %s", f.At.Seconds(), f.For.Seconds(), f.Kind, f.Target)
	if f.Skew != 0 {
		s += fmt.Sprintf(" (clock %+.1fs)", f.Skew.Seconds())
	}
	return s
}

// targets are what a schedule may break.
type targets struct {
	// Push members (through proxies) and Pull members (their agents).
	Push, Pull []string
	// Timing the faults must straddle.
	NoScheduleGrace, NoExecuteGrace time.Duration
	// LeaseDuration of the controller manager's leader election: a killed
	// leader stays down longer, so the other replica takes over (back
	// sooner, it would take its own lease back).
	LeaseDuration time.Duration
	// AgentProbeInterval and AgentLeaseDuration time the Pull agents: how
	// often they report their cluster, and how long their Lease lasts.
	AgentProbeInterval, AgentLeaseDuration time.Duration
}

// schedule draws the faults of a run of length d from seed. It is a pure
// function of its arguments: the same seed replays the same faults.
//
// Faults overlap, on different targets: that is the point. Two faults
// never hold one target at once (a member is not cut while already cut),
// and the controllers count as one target (a replica is not killed while
// both are down). Every fault ends before d, so the run ends healed.
func schedule(seed uint64, d time.Duration, t targets) []fault {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var out []fault
	busy := map[string][]fault{}
	free := func(target string, at, dur time.Duration) bool {
		for _, f := range busy[target] {
			if at < f.At+f.For+time.Second && f.At < at+dur+time.Second {
				return false
			}
		}
		return true
	}
	secs := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
	}
	// About one fault per 8 seconds of run.
	n := int(d/(8*time.Second)) + 1
	for range n * 3 {
		if len(out) >= n {
			break
		}
		var f fault
		switch r.IntN(18) {
		case 0:
			f = fault{Kind: killLeader, Target: "controllers", For: secs(t.LeaseDuration+2*time.Second, t.LeaseDuration+8*time.Second)}
		case 1:
			f = fault{Kind: killAll, Target: "controllers", For: secs(time.Second, 8*time.Second)}
		case 2:
			if len(t.Pull) == 0 {
				continue
			}
			f = fault{Kind: stopAgent, Target: t.Pull[r.IntN(len(t.Pull))], For: secs(2*time.Second, t.NoExecuteGrace+5*time.Second)}
		case 3:
			f = fault{Kind: cutMemberShort, For: secs(time.Second, t.NoScheduleGrace/2)}
		case 4:
			f = fault{Kind: cutMemberLong, For: secs(t.NoExecuteGrace+2*time.Second, t.NoExecuteGrace+10*time.Second)}
		case 5:
			f = fault{Kind: slowMember, For: secs(3*time.Second, 12*time.Second)}
		case 6:
			f = fault{Kind: flakyMember, For: secs(3*time.Second, 12*time.Second)}
		case 7:
			f = fault{Kind: cutHub, Target: "hub", For: secs(2*time.Second, 10*time.Second)}
		case 8:
			// For is how long the hub stays down, its start not counted.
			f = fault{Kind: restartHub, Target: "hub", For: secs(time.Second, 6*time.Second)}
		case 9:
			f = fault{Kind: freezeLeader, Target: "controllers", For: secs(t.LeaseDuration+2*time.Second, t.LeaseDuration+8*time.Second)}
		case 10:
			if len(t.Pull) == 0 {
				continue
			}
			// For is how long the fault holds its target, not the
			// agent's downtime (none).
			f = fault{Kind: restartAgent, Target: t.Pull[r.IntN(len(t.Pull))], For: time.Second}
		case 11:
			all := append(append([]string{}, t.Push...), t.Pull...)
			f = fault{Kind: deleteWork, Target: all[r.IntN(len(all))], For: secs(time.Second, 5*time.Second)}
		case 12:
			f = fault{Kind: deleteBinding, Target: "bindings", For: secs(time.Second, 5*time.Second)}
		case 13:
			all := append(append([]string{}, t.Push...), t.Pull...)
			f = fault{Kind: deleteMemberObject, Target: all[r.IntN(len(all))], For: secs(time.Second, 5*time.Second)}
		case 14:
			// For is how long the member stays down, its start not
			// counted.
			all := append(append([]string{}, t.Push...), t.Pull...)
			f = fault{Kind: restartMember, Target: all[r.IntN(len(all))], For: secs(time.Second, 6*time.Second)}
		case 15:
			f = fault{Kind: slowHubEtcd, Target: "hub", For: secs(3*time.Second, 12*time.Second)}
		case 16:
			all := append(append([]string{}, t.Push...), t.Pull...)
			f = fault{Kind: removeCRD, Target: all[r.IntN(len(all))], For: secs(time.Second, 5*time.Second)}
		case 17:
			if len(t.Pull) == 0 {
				continue
			}
			// Beyond a probe interval, a report and the probe after it
			// are ordered differently on the two clocks (at least two,
			// so that the hub shows the skew apart from a probe's
			// lateness); beyond a Lease duration, the Lease's renewTime
			// says expired (or alive) on the hub's clock whatever the
			// agent does. For: long enough for Works to be applied and
			// reported meanwhile.
			skew := secs(2*t.AgentProbeInterval, 3*t.AgentLeaseDuration).Round(time.Millisecond)
			if r.IntN(2) == 0 {
				skew = -skew
			}
			f = fault{Kind: skewAgentClock, Target: t.Pull[r.IntN(len(t.Pull))], For: secs(10*time.Second, 30*time.Second), Skew: skew}
		}
		if f.Target == "" {
			f.Target = t.Push[r.IntN(len(t.Push))]
		}
		if f.For >= d {
			continue
		}
		f.At = time.Duration(r.Int64N(int64(d - f.For)))
		if !free(f.Target, f.At, f.For) {
			continue
		}
		busy[f.Target] = append(busy[f.Target], f)
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b fault) int { return int(a.At - b.At) })
	return out
}
