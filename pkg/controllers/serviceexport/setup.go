package serviceexport

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the controller: one reconcile per Cluster, triggered by
// the Cluster, by anything it watches in the member, and by the hub's
// verdict on the member's ExportedServices.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	o := opts.withDefaults()
	memberEvents := make(chan event.GenericEvent, 1024)
	stopping := make(chan struct{})
	ms := newMembers(func(cluster string) {
		select {
		case memberEvents <- event.GenericEvent{Object: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}}:
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
	r := &Reconciler{client: mgr.GetClient(), clients: d.Clients, members: ms, fence: d.Fence, pullCluster: d.PullCluster,
		now: func() metav1.Time { return metav1.NewTime(d.Clock.Now()) }}
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}).
		Watches(&mcv1alpha1.ExportedService{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			es, ok := o.(*mcv1alpha1.ExportedService)
			if !ok || es.Spec.Cluster == "" {
				return nil
			}
			ms.mark(es.Spec.Cluster, change{export: true, namespace: es.Spec.Namespace, name: es.Spec.Name})
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: es.Spec.Cluster}}}
		})).
		WatchesRawSource(source.Channel(memberEvents, &handler.EnqueueRequestForObject{})).
		WithOptions(d.ControllerOptions(o.Workers)).
		Complete(r)
}
