package clusterstatus

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// The scheduler counts the replicas a member reports for a workload as
// part of the cluster's resource summary only once the Cluster was probed
// after the report was seen (a Work's manifestStatuses[].statusTime
// before the Cluster's lastProbeTime): until then they stay "in flight"
// and their room is taken twice, once by the pods the summary counts and
// once by the replicas in flight. A probe that finds nothing changed
// writes nothing, to spare the hub a write per member per probe; but when
// a report came after the last probe time, the probe has news for the
// scheduler, the time itself, and writes it. Without this, room stayed
// taken twice until the next periodic refresh (a minute by default), and a
// workload refused for that room waited on its back-off.

// reportedSince reports whether a Work of cluster has a manifest status
// seen at or after since: the scheduler waits for a probe time later than
// it. Both times are stored in whole seconds, so a report in the probe
// time's second may have come after it.
// Works are read from the cache, the ones in the cluster's execution
// namespace (the agent of a Pull cluster can read only these).
func (r *Reconciler) reportedSince(ctx context.Context, cluster string, since time.Time) (bool, error) {
	var works workv1alpha1.WorkList
	// Read only, on every quiet probe: the cache's objects, not copies.
	if err := r.Client.List(ctx, &works, client.InNamespace(names.ExecutionNamespace(cluster)), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	return anyReportAfter(works.Items, since), nil
}

// anyReportAfter reports whether a manifest status of works was seen at
// or after since (whole seconds: the same second cannot be ordered).
func anyReportAfter(works []workv1alpha1.Work, since time.Time) bool {
	for i := range works {
		for _, ms := range works[i].Status.ManifestStatuses {
			if ms.StatusTime != nil && !ms.StatusTime.Time.Before(since) {
				return true
			}
		}
	}
	return false
}
