package reschedule

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
)

// Options configure the RescheduleTask controller.
type Options struct {
	// Workers is how many tasks are reconciled in parallel (default 2).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}

// The rechecks of a task with Pending targets start at pollBaseDelay and
// double up to pollMaxDelay.
const (
	pollBaseDelay = 500 * time.Millisecond
	pollMaxDelay  = 30 * time.Second
)

// ControllerName names the RescheduleTask controller in the registry and
// its events.
const ControllerName = "reschedule"

// tasksWaitingFor maps a binding event to the tasks waiting for it.
func (r *Reconciler) tasksWaitingFor(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &taskv1alpha1.RescheduleTaskList{}
	if err := r.client.List(ctx, list, client.MatchingFields{index.TasksByPendingBinding: bindingKey(obj.GetNamespace(), obj.GetName())}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the tasks of a binding", "binding", bindingKey(obj.GetNamespace(), obj.GetName()))
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
