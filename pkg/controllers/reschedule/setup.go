package reschedule

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
)

// Setup adds the RescheduleTask controller ("rescheduletask") and
// index.TasksByPendingBinding. Tasks wake it when created or when their
// spec changes (its own status writes do not); bindings wake the tasks
// with a Pending target on them.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	r := &Reconciler{
		client:    d.Client(),
		apiReader: mgr.GetAPIReader(),
		recorder:  d.Recorder(ControllerName),
		poll:      workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](pollBaseDelay, pollMaxDelay),
		opts:      opts.withDefaults(),
		now:       time.Now,
	}
	if err := index.SetupTasksByPendingBinding(d); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("rescheduletask").
		For(&taskv1alpha1.RescheduleTask{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.tasksWaitingFor)).
		Watches(&workv1alpha1.ClusterResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.tasksWaitingFor)).
		WithOptions(d.ControllerOptions(r.opts.Workers)).
		Complete(r)
}
