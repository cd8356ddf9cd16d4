package serviceimport

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/mcs"
)

// Setup registers the two controllers: service-import, one reconcile per
// exported Service, and service-import-members, one per Cluster, which
// carries the MCS API to it.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	o := opts.withDefaults()
	if err := index.SetupExportsByService(d); err != nil {
		return err
	}
	if err := index.SetupImportWorksByService(d); err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), now: metaNow, selector: o.Members, grace: o.EndpointGracePeriod, maxEndpoints: o.MaxEndpointsPerCluster}
	// A Cluster that joins, leaves or changes readiness changes every
	// import: it receives them, or its endpoints come and go.
	everyService := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := &mcv1alpha1.ExportedServiceList{}
		if err := mgr.GetClient().List(ctx, list); err != nil {
			return nil
		}
		seen := map[types.NamespacedName]bool{}
		var out []reconcile.Request
		for _, es := range list.Items {
			k := types.NamespacedName{Namespace: es.Spec.Namespace, Name: es.Spec.Name}
			if !seen[k] {
				seen[k] = true
				out = append(out, reconcile.Request{NamespacedName: k})
			}
		}
		return out
	})
	if err := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&mcv1alpha1.ExportedService{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			es := obj.(*mcv1alpha1.ExportedService)
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: es.Spec.Namespace, Name: es.Spec.Name}}}
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			l := obj.GetLabels()
			if l[mcs.LabelServiceName] == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[mcs.LabelServiceNamespace], Name: l[mcs.LabelServiceName]}}}
		}), builder.WithPredicates(predicate.Funcs{
			// A Work removed by hand (or with its member) is sent again;
			// its status changes are not this controller's business.
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Watches(&clusterv1alpha1.Cluster{}, everyService, builder.WithPredicates(membershipChanged())).
		WithOptions(d.ControllerOptions(o.Workers)).
		Complete(r); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName+"-members").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			if obj.GetLabels()[LabelMemberAPI] == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: clusterOf(obj.GetNamespace())}}}
		}), builder.WithPredicates(predicate.Funcs{
			// Deleted: send it again; updated: its Applied condition
			// lets the ClusterProperties go.
			CreateFunc: func(event.CreateEvent) bool { return false },
		})).
		WithOptions(d.ControllerOptions(1)).
		Complete(&memberAPIReconciler{client: mgr.GetClient(), clusterSet: o.ClusterSet, selector: o.Members})
}

// membershipChanged passes Cluster events that change the ClusterSet or a
// member's readiness.
func membershipChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			if !ok1 || !ok2 {
				return false
			}
			return o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() || !maps.Equal(o.Labels, n.Labels) ||
				meta.IsStatusConditionTrue(o.Status.Conditions, clusterv1alpha1.ClusterConditionReady) !=
					meta.IsStatusConditionTrue(n.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		},
	}
}
