package serviceimport

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// readySince is when member c's Ready condition took its current status,
// on the hub's clock (now's), for its endpoint grace period. A Push
// member's lastTransitionTime is that: the hub stamped it. A Pull
// member's was stamped by its agent (or by the hub, when its Lease
// expired), on a clock that may be off from the hub's by any amount, so
// the grace counts from when this controller saw the transition (see
// firstseen). A non-True condition it has not seen begin (its first read
// since it started, or since the member joined) began at an unknown time:
// it gets no grace. The grace only delays withdrawing the endpoints of a
// member that is not Ready; giving it in full on a first read would put
// back, after every restart, the endpoints of a member that had been
// down for long and withdrawn.
func (r *Reconciler) readySince(c *clusterv1alpha1.Cluster, ready *metav1.Condition, now time.Time) time.Time {
	switch {
	case ready == nil:
		return time.Time{}
	case c.Spec.SyncMode != clusterv1alpha1.Pull:
		return ready.LastTransitionTime.Time
	}
	at, changed := r.seen.Since(c.Name, ready, now)
	if !changed {
		return time.Time{}
	}
	return at
}
