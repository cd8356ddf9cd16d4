package index

import (
	"slices"
	"testing"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
)

func TestPendingBindings(t *testing.T) {
	task := func(targets ...taskv1alpha1.TargetStatus) *taskv1alpha1.RescheduleTask {
		return &taskv1alpha1.RescheduleTask{Status: taskv1alpha1.RescheduleTaskStatus{Targets: targets}}
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"a task by the bindings of its Pending targets", pendingBindings(task(
			taskv1alpha1.TargetStatus{Binding: "shop/web-deployment", Phase: taskv1alpha1.TargetPending},
			taskv1alpha1.TargetStatus{Binding: "shop/api-deployment", Phase: taskv1alpha1.TargetSuccessful},
			taskv1alpha1.TargetStatus{Binding: "crds-clusterrole", Phase: taskv1alpha1.TargetPending},
			taskv1alpha1.TargetStatus{Binding: "shop/db-statefulset", Phase: taskv1alpha1.TargetFailed})),
			[]string{"shop/web-deployment", "crds-clusterrole"}},
		{"a Pending target without a binding yet", pendingBindings(task(taskv1alpha1.TargetStatus{Phase: taskv1alpha1.TargetPending})), nil},
		{"a task without targets", pendingBindings(task()), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
