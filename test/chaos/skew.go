package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// skewedClock is the real clock set off by skew: what a host whose clock
// is wrong reads. The agents run in this process, so the fault gives the
// agent such a clock (agent.Options.Clock) rather than changing a host's:
// every time it writes reads it, through the code path of any agent.
type skewedClock struct{ skew time.Duration }

func (c skewedClock) Now() time.Time                  { return time.Now().Add(c.skew) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var _ clock.PassiveClock = skewedClock{}

// withSkew is agentOpts with the clock set off by skew.
func withSkew(skew time.Duration) agent.Options {
	o := agentOpts
	o.Clock = skewedClock{skew}
	return o
}

// restartAgentWith stops Pull member name's agent, if it runs, and starts
// it with opts.
func (cf *chaosFleet) restartAgentWith(t testing.TB, name string, opts agent.Options) {
	cf.stopAgent(t, name)
	cf.agentsMu.Lock()
	defer cf.agentsMu.Unlock()
	if err := cf.env.Fleet.StartAgent(name, opts); err != nil {
		t.Errorf("starting the agent of %s: %v", name, err)
		return
	}
	delete(cf.agentsStopped, name)
}

// stampsOff is the fault made real: how far off the hub's clock the times
// are that the agent of f.Target writes once restarted with f.Skew, as
// the hub shows them: its Lease's renewTime (to the microsecond, renewed
// every retry period) and its Cluster's lastProbeTime (to the second,
// written when the status changes or a report came after it). Each new
// value is timed when its read returned: the freshest (the greatest
// offset) is the clock's offset less at most a renewal period and its
// read's duration. A Lease so renewed three times whose offset is not the
// skew's fails the test: the agent would not write on the clock it was
// given. lastProbeTime, written seldom, is logged only, and so is a hub
// that does not show the new agent's times within the given time (being
// restarted, or slow).
func (cf *chaosFleet) stampsOff(ctx context.Context, t testing.TB, f fault, before agentStamps, beforeErr error, within time.Duration) string {
	if beforeErr != nil {
		return fmt.Sprintf("; not checked: the hub did not answer before the restart: %v", beforeErr)
	}
	lease, probe := &freshest{}, &freshest{}
	for deadline := time.Now().Add(within); time.Now().Before(deadline) && lease.values < 3; time.Sleep(100 * time.Millisecond) {
		start := time.Now()
		cur, err := cf.readStamps(ctx, f.Target)
		if err != nil {
			continue
		}
		end := time.Now()
		if cur.holder != "" && cur.renewed != nil && !timeEqual(cur.acquired, before.acquired) {
			lease.add(*cur.renewed, start, end)
		}
		if cur.ready && cur.probed != nil && !timeEqual(cur.probed, before.probed) {
			probe.add(*cur.probed, start, end)
		}
	}
	out := "; Lease renewTime " + lease.String() + "; Cluster lastProbeTime " + probe.String()
	if lease.values >= 3 && (lease.off > f.Skew+time.Second || lease.off < f.Skew-agentOpts.RetryPeriod-time.Second-lease.slack) {
		t.Errorf("%v: the agent's Lease renewTime is %s off the hub's clock, not its clock's skew %s", f, lease.off, f.Skew)
	}
	return out
}

// freshest is the newest of the values of one time the hub showed: its
// offset from the end of the read that returned it, and that read's
// duration.
type freshest struct {
	values     int // distinct values seen
	last       time.Time
	off, slack time.Duration
}

func (f *freshest) add(v, start, end time.Time) {
	if f.values > 0 && v.Equal(f.last) {
		return
	}
	if off := v.Sub(end); f.values == 0 || off > f.off {
		f.off, f.slack = off, end.Sub(start)
	}
	f.values++
	f.last = v
}

func (f *freshest) String() string {
	if f.values == 0 {
		return "no new value seen"
	}
	return fmt.Sprintf("%+.3fs off the hub's clock (freshest of %d, read in %s)", f.off.Seconds(), f.values, f.slack.Round(time.Millisecond))
}

// agentStamps are the times an agent wrote for the hub, as the hub has
// them.
type agentStamps struct {
	holder            string
	acquired, renewed *time.Time
	probed            *time.Time
	ready             bool // the Cluster's Ready is True: its agent's report
}

func (cf *chaosFleet) readStamps(ctx context.Context, cluster string) (agentStamps, error) {
	var s agentStamps
	l := &coordinationv1.Lease{}
	if err := cf.env.Hub.Get(ctx, client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: clusterv1alpha1.AgentLeaseName}, l); err != nil {
		return s, err
	}
	if l.Spec.HolderIdentity != nil {
		s.holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		s.acquired = &l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		s.renewed = &l.Spec.RenewTime.Time
	}
	c := &clusterv1alpha1.Cluster{}
	if err := cf.env.Hub.Get(ctx, client.ObjectKey{Name: cluster}, c); err != nil {
		return s, err
	}
	if c.Status.LastProbeTime != nil {
		s.probed = &c.Status.LastProbeTime.Time
	}
	s.ready = meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	return s, nil
}

func timeEqual(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
