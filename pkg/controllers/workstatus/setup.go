package workstatus

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Setup registers four controllers sharing one set of member informers:
// Work status (member -> Work), member informer lifecycle (Cluster
// deletion), and binding status for each binding kind (Work -> binding ->
// template). An agent (d.PullCluster set) runs step 1 only, for its own
// Works, reading the member d.Clients serves, and the pod metrics
// reporter (podmetrics.go); the hub aggregates. On the
// hub, step 1 runs for Push clusters only, and steps 2 and 3 for every
// cluster.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	o := opts.withDefaults()
	if err := index.SetupWorksByBinding(d); err != nil {
		return err
	}

	// Member informer events reach the Work controller through a channel.
	// A send gives up once the manager stops: the channel's reader is gone
	// then, and a blocked informer handler would hang the informers'
	// shutdown.
	memberEvents := make(chan event.TypedGenericEvent[*workv1alpha1.Work], 1024)
	stopping := make(chan struct{})
	ms := newMembers(func(k types.NamespacedName) {
		ev := event.TypedGenericEvent[*workv1alpha1.Work]{Object: &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}}
		select {
		case memberEvents <- ev:
		case <-stopping:
		}
	})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(stopping)
		ms.stopAll()
		return nil
	})); err != nil {
		return err
	}
	wr := &workReconciler{client: mgr.GetClient(), clients: d.Clients, in: d.Interpreter, members: ms, pullCluster: d.PullCluster, clock: d.Clock}
	// A HealthInterpreter or customization set or cleared changes the
	// health of every object of its kind, though none of them changed: look at their Works again.
	d.Interpreter.OnChange(func(gvk schema.GroupVersionKind) {
		works := &workv1alpha1.WorkList{}
		if err := mgr.GetClient().List(context.Background(), works); err != nil {
			// Only before the cache started: no Work was reconciled yet,
			// so each one's first reconcile uses the new interpreter.
			return
		}
		for _, k := range worksOfKind(works.Items, gvk) {
			ms.notify(k)
		}
	})
	inExecutionNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return names.IsExecutionNamespace(obj.GetNamespace()) })
	if err := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(inExecutionNamespace)).
		WatchesRawSource(source.Channel(memberEvents, bindingutil.Coalesced(o.CoalesceWindow, func(w *workv1alpha1.Work) (reconcile.Request, bool) {
			return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}, true
		}))).
		WithOptions(d.ControllerOptions(o.Workers)).
		Complete(wr); err != nil {
		return err
	}

	if err := builder.ControllerManagedBy(mgr).
		Named(ControllerName+"-members").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() },
		})).
		WithOptions(d.ControllerOptions(0)).
		Complete(&memberReconciler{client: mgr.GetClient(), members: ms, clients: d.Clients}); err != nil {
		return err
	}

	if d.Agent() {
		// An agent reports its Works, and the pod metrics the hub cannot
		// read itself; the hub aggregates them.
		return setupPodMetrics(d, o)
	}
	rec := d.Recorder(ControllerName)
	if err := setupBindingController[workv1alpha1.ResourceBinding](d, workv1alpha1.KindResourceBinding, rec, o); err != nil {
		return err
	}
	return setupBindingController[workv1alpha1.ClusterResourceBinding](d, workv1alpha1.KindClusterResourceBinding, rec, o)
}
