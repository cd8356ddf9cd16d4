package failover

import (
	"context"
	"strings"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
)

// Setup registers the failover controllers of both binding kinds
// ("failover-resourcebinding", "failover-clusterresourcebinding"), sharing
// one cluster-eviction rate limiter.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts = opts.withDefaults()
	limiter := opts.limiter()
	if err := setupKind(d, bindingutil.ResourceBindings(), opts, limiter); err != nil {
		return err
	}
	return setupKind(d, bindingutil.ClusterResourceBindings(), opts, limiter)
}

func setupKind[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T], opts Options, limiter *rate.Limiter) error {
	mgr := d.Manager
	r := newReconciler(d, kind, opts, limiter)
	if err := index.SetupBindingsByTargetCluster(d, kind); err != nil {
		return err
	}
	// Every binding change counts, status included: aggregatedStatus (the
	// health) is status, and a reconcile that finds nothing due is cheap
	// and writes nothing.
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName+"-"+strings.ToLower(kind.Name)).
		For(kind.New()).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			list := kind.NewList()
			if err := mgr.GetClient().List(ctx, list, client.MatchingFields{index.BindingsByTargetCluster: o.GetName()}); err != nil {
				return nil
			}
			var reqs []reconcile.Request
			for _, b := range kind.Items(list) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
			}
			return reqs
		}), builder.WithPredicates(taintsChanged())).
		WithOptions(d.ControllerOptions(opts.Workers)).
		Complete(r)
}

// taintsChanged passes Cluster events that may start or stop a cluster
// failover: a new cluster with taints, or a change of its taints.
func taintsChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			return len(e.Object.(*clusterv1alpha1.Cluster).Spec.Taints) > 0
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !equality.Semantic.DeepEqual(e.ObjectOld.(*clusterv1alpha1.Cluster).Spec.Taints, e.ObjectNew.(*clusterv1alpha1.Cluster).Spec.Taints)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
