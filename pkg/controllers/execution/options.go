// Package execution applies Works to member clusters: each manifest of a
// Work in a cluster's execution namespace (shepherd-es-<cluster>) is
// server-side applied to that member, and removed from it when the
// manifest or the Work goes.
//
// What a Work applied is remembered in its status (manifestStatuses[].
// identifier), not in memory, so a manifest dropped from a Work is deleted
// from the member even across restarts. Member objects carry the label
// app.kubernetes.io/managed-by=shepherd and the annotation
// work.shepherd.io/work=<namespace>/<name>; the controller deletes only
// objects whose annotation names the Work being cleaned up, so it never
// removes what another Work or a user owns.
//
// A member that does not answer must not hold up the others: requests have
// a short timeout (clusterclient.Options), a member the cluster status
// controller reports Unreachable is not contacted at all, and after one
// request to a member fails to connect, the other Works of that member
// fail fast for UnreachableBackoff instead of each waiting for a timeout.
// Until that happens, a member can occupy at most MaxInFlightPerCluster
// workers.
package execution

import (
	"time"
)

// Defaults of Options.
const (
	DefaultWorkers            = 32
	DefaultResyncPeriod       = 10 * time.Minute
	DefaultUnreachableBackoff = 10 * time.Second
	DefaultRetryBaseDelay     = time.Second
	DefaultRetryMaxDelay      = 5 * time.Minute
	DefaultDriftRevertDelay   = 30 * time.Second
	// busyRequeue is when a Work over its member's in-flight cap is tried
	// again.
	busyRequeue = 200 * time.Millisecond
	// waitForClusterRecheck is how often a Work of a member reported
	// Unreachable is looked at again, in case the Cluster's recovery event
	// was missed; normally that event requeues it at once.
	waitForClusterRecheck = time.Minute
)

// Options configure the Reconciler. Zero values take the defaults.
type Options struct {
	// Workers is the number of Works reconciled concurrently (default 32).
	Workers int
	// MaxInFlightPerCluster caps the Works of one member reconciled at
	// once (default half the workers, at least 1); a Work over the cap is
	// requeued shortly instead of waiting for a worker.
	MaxInFlightPerCluster int
	// ResyncPeriod re-applies every Work this often (default 10 min), which
	// restores member objects someone changed or deleted.
	ResyncPeriod time.Duration
	// DriftRevertDelay is how long a drift under whenToApply Always is
	// reported before an apply puts Shepherd's fields back (default 30 s).
	DriftRevertDelay time.Duration
	// UnreachableBackoff is how long a member that failed to answer is not
	// contacted again by other Works (default 10 s).
	UnreachableBackoff time.Duration
	// RetryBaseDelay and RetryMaxDelay bound the exponential back-off of a
	// Work whose apply failed (defaults 1 s and 5 min).
	RetryBaseDelay, RetryMaxDelay time.Duration
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxInFlightPerCluster <= 0 {
		o.MaxInFlightPerCluster = max(1, o.Workers/2)
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.DriftRevertDelay <= 0 {
		o.DriftRevertDelay = DefaultDriftRevertDelay
	}
	if o.UnreachableBackoff <= 0 {
		o.UnreachableBackoff = DefaultUnreachableBackoff
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = DefaultRetryMaxDelay
	}
	return o
}
