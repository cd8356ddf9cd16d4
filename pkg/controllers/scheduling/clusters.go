package scheduling

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
)

// setupIndexes registers the cache indexes on the kind's bindings, so that
// a cluster event finds the bindings it concerns without scanning them all:
// index.BindingsByTargetCluster, shared with failover, and
// index.BindingsByClass.
func setupIndexes[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	if err := index.SetupBindingsByTargetCluster(d, kind); err != nil {
		return err
	}
	if err := index.SetupBindingsByClass(d, kind); err != nil {
		return err
	}
	return index.SetupBindingsByWorkloadAffinityGroup(d)
}

// clusterHandler invalidates the fleet snapshot on every cluster event and
// enqueues the bindings the change may concern:
//
//   - a cluster gone or leaving: the bindings targeting it;
//   - a cluster that may have become eligible: the bindings placed on every
//     eligible cluster (to add it) and those not scheduled yet (to retry);
//   - allocatable resources changed: the bindings not scheduled yet;
//   - either of the last two: the bindings that may hold replicas on
//     overflow clusters (room may have returned before them).
func (r *Reconciler[T]) clusterHandler() handler.TypedEventHandler[*clusterv1alpha1.Cluster, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.TypedFuncs[*clusterv1alpha1.Cluster, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*clusterv1alpha1.Cluster], q queue) {
			r.clusterChanged(ctx, e.Object.Name, changeEligibility, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*clusterv1alpha1.Cluster], q queue) {
			r.clusterChanged(ctx, e.ObjectNew.Name, classify(e.ObjectOld, e.ObjectNew), q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*clusterv1alpha1.Cluster], q queue) {
			r.clusterChanged(ctx, e.Object.Name, changeGone, q)
		},
	}
}

func (r *Reconciler[T]) clusterChanged(ctx context.Context, cluster string, c clusterChange, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	r.fleet.Invalidate()
	var selectors []client.MatchingFields
	if c&changeGone != 0 {
		selectors = append(selectors, client.MatchingFields{index.BindingsByTargetCluster: cluster})
	}
	if c&changeEligibility != 0 {
		selectors = append(selectors, client.MatchingFields{index.BindingsByClass: index.ClassEverywhere})
	}
	if c&(changeEligibility|changeCapacity) != 0 {
		selectors = append(selectors, client.MatchingFields{index.BindingsByClass: index.ClassRetry}, client.MatchingFields{index.BindingsByClass: index.ClassOverflow})
	}
	for _, sel := range selectors {
		list := r.kind.NewList()
		if err := r.client.List(ctx, list, sel); err != nil {
			logf.FromContext(ctx).Error(err, "listing bindings for a cluster event", "cluster", cluster, "kind", r.kind.Name)
			continue
		}
		for _, b := range r.kind.Items(list) {
			enqueue(q, b)
		}
	}
}
