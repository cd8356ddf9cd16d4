package clusterstatus

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shepherd-io/shepherd/pkg/controllers/internal/firstseen"
)

// renewals is when this process saw each Pull cluster's Lease renewed, on
// its own clock. An agent stamps renewTime on its clock, which may be off
// from the hub's by more than the Lease's duration: compared with the
// hub's clock, a live agent whose clock is behind would look expired, and
// a stopped one whose clock is ahead alive. So the hub counts a Lease from
// when it first read its current holder and renewTime (see firstseen).
//
// After a restart, a Lease is first seen renewed then, so an agent that
// stopped without releasing its Lease keeps its cluster's readiness one
// duration longer, never shorter. The hub reads the Lease on its probes
// (every ProbeInterval), so it may see a renewal up to one interval late:
// a stopped agent is noticed that much later too.
type renewals struct{ t firstseen.Tracker[renewal] } // by cluster name

// renewal is a Lease's holder and renewTime (in nanoseconds: a time's
// location must not make two reads differ).
type renewal struct {
	holder    string
	renewTime int64
}

// seen returns when cluster's lease (renewed at least once) was first read
// with its current holder and renewTime, now if this is the first time.
func (rs *renewals) seen(cluster string, lease *coordinationv1.Lease, now time.Time) time.Time {
	at, _ := rs.t.Since(cluster, renewal{holder: holderOf(lease), renewTime: lease.Spec.RenewTime.UnixNano()}, now)
	return at
}

func (rs *renewals) forget(cluster string) { rs.t.Forget(cluster) }

// readySince is when the hub saw a Pull cluster's Ready condition take
// its current status, on the hub's clock: its lastTransitionTime is the
// agent's (or, when the hub found the Lease expired, the hub's), so a
// grace period counted from it would end at once when the agent's clock
// is behind by more than the grace, and late when it is ahead. After a
// restart, the hub has seen no transition: a condition it reads for the
// first time counts from then, so a taint not yet due waits one full
// grace more, never less (one already there stays: see decide).
type readySince struct{ c firstseen.Conditions } // by cluster name

func (rs *readySince) since(cluster string, ready *metav1.Condition, now time.Time) time.Time {
	at, _ := rs.c.Since(cluster, ready, now)
	return at
}

func (rs *readySince) forget(cluster string) { rs.c.Forget(cluster) }
