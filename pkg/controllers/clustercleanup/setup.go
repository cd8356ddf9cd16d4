package clustercleanup

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup adds the cluster cleanup controller to mgr.
func Setup(d controllerdeps.Deps) error {
	d = d.WithDefaults()
	mgr := d.Manager
	r := &Reconciler{client: mgr.GetClient(), recorder: d.Recorder(ControllerName), conflicts: conflicts.NewRequeue()}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(clusterOfWork)).
		WithOptions(d.ControllerOptions(0)).
		Complete(r)
}
