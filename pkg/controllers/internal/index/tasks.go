package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// TasksByPendingBinding indexes RescheduleTasks by the bindings of their
// Pending targets, keyed as a target's status names its binding
// ("<namespace>/<name>", or "<name>" for a ClusterResourceBinding): the
// reschedule controller wakes only the tasks waiting for a binding with
// it.
const TasksByPendingBinding = "reschedule.shepherd.io/pending-binding"

// SetupTasksByPendingBinding registers TasksByPendingBinding, once.
func SetupTasksByPendingBinding(d controllerdeps.Deps) error {
	return register(d, TasksByPendingBinding, &taskv1alpha1.RescheduleTask{}, TasksByPendingBinding, pendingBindings)
}

func pendingBindings(o client.Object) []string {
	var out []string
	for _, t := range o.(*taskv1alpha1.RescheduleTask).Status.Targets {
		if t.Phase == taskv1alpha1.TargetPending && t.Binding != "" {
			out = append(out, t.Binding)
		}
	}
	return out
}
