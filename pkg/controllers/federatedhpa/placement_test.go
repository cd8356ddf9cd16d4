package federatedhpa

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestPlacementFrom(t *testing.T) {
	binding := func(replicas int32, generation int64, cond *metav1.Condition, targets ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
		rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
		rb.Spec.Replicas, rb.Spec.Clusters = replicas, targets
		if cond != nil {
			rb.Status.Conditions = []metav1.Condition{*cond}
		}
		return rb
	}
	scheduled := func(status metav1.ConditionStatus, reason string, observed int64) *metav1.Condition {
		return &metav1.Condition{Type: workv1alpha1.ConditionScheduled, Status: status, Reason: reason, Message: "0/2 clusters available", ObservedGeneration: observed}
	}
	placed := []workv1alpha1.TargetCluster{{Name: "b", Replicas: 2}, {Name: "a", Replicas: 2}, {Name: "gone", Replicas: 1, State: workv1alpha1.TargetUnscheduled}}
	for _, tc := range []struct {
		name         string
		rb           *workv1alpha1.ResourceBinding
		replicas     int32
		wantUnplaced bool
	}{
		{name: "the scheduler refused the target's count", rb: binding(8, 3, scheduled(metav1.ConditionFalse, workv1alpha1.ReasonUnschedulable, 3), placed...), replicas: 8, wantUnplaced: true},
		{name: "placed", rb: binding(8, 3, scheduled(metav1.ConditionTrue, "Success", 3), placed...), replicas: 8},
		{name: "the detector has not copied the new count yet", rb: binding(4, 3, scheduled(metav1.ConditionFalse, workv1alpha1.ReasonUnschedulable, 3), placed...), replicas: 8},
		{name: "the scheduler has not tried the new count yet (an older generation's verdict)", rb: binding(8, 4, scheduled(metav1.ConditionFalse, workv1alpha1.ReasonUnschedulable, 3), placed...), replicas: 8},
		{name: "a scheduler error is not a lack of room", rb: binding(8, 3, scheduled(metav1.ConditionFalse, "SchedulerError", 3), placed...), replicas: 8},
		{name: "never scheduled", rb: binding(8, 1, nil), replicas: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := placementFrom(tc.rb, tc.replicas)
			if (p.unplaced != "") != tc.wantUnplaced {
				t.Errorf("unplaced = %q, want set: %v", p.unplaced, tc.wantUnplaced)
			}
			if want := []string{"a", "b"}; len(tc.rb.Spec.Clusters) > 0 && !slices.Equal(p.clusters, want) {
				t.Errorf("clusters = %v, want %v (active, sorted)", p.clusters, want)
			}
		})
	}
}
