package cli

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestPlacementSummaryShowsUnschedulable(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 4}, {Name: "member2", Replicas: 4}}}
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, Health: policyv1alpha1.ResourceHealthy},
		{ClusterName: "member2", Applied: true, Health: policyv1alpha1.ResourceHealthy, UnschedulableReplicas: 2},
	}}
	want := "member1=4 (Healthy), member2=4 (Healthy) [2 unschedulable]"
	if got := placementSummary(spec, status); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A gang's unschedulable pods are shown by component where the cluster
// reports them; those of no component count in the total only.
func TestPlacementSummaryShowsUnschedulableComponents(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "member1"}, {Name: "member2"}}}
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true, UnschedulableReplicas: 4, UnschedulableComponents: []workv1alpha1.UnschedulableComponent{
			{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 2}}},
		{ClusterName: "member2", Applied: true},
	}}
	want := "member1 (Applied) [4 unschedulable: ray-head 1, workers 2], member2 (Applied)"
	if got := placementSummary(spec, status); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPlacementSummaryShowsDriftAndUnclaimed(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}}}
	tests := []struct {
		name   string
		status *workv1alpha1.BindingStatus
		want   string
	}{
		{name: "drifted copy", status: &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
			{ClusterName: "member1", Applied: true, Health: policyv1alpha1.ResourceHealthy},
			{ClusterName: "member2", Applied: true, Health: policyv1alpha1.ResourceHealthy, Drifted: true},
		}}, want: "member1=1 (Healthy), member2=1 (Healthy) [drifted]"},
		{name: "drift held back", status: &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
			{ClusterName: "member1", Applied: false, AppliedReason: workv1alpha1.ReasonDriftHeld, Drifted: true},
		}}, want: "member1=1 (DriftHeld) [drifted], member2=1"},
		{name: "unclaimed", status: &workv1alpha1.BindingStatus{Conditions: []metav1.Condition{
			{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonPolicyDeleted},
		}}, want: "member1=1, member2=1 [unclaimed]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := placementSummary(spec, tt.status); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// Kinds without replicas show whether each copy is applied, not a count of
// 0 and an Unknown health; kinds with a health rule keep their health.
func TestPlacementSummaryForEveryKind(t *testing.T) {
	targets := []workv1alpha1.TargetCluster{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}}
	for _, tc := range []struct {
		name     string
		replicas int32
		targets  []workv1alpha1.TargetCluster
		status   []workv1alpha1.AggregatedStatusItem
		want     string
	}{
		{
			name: "a ConfigMap applied, in conflict, not reported yet", targets: targets,
			status: []workv1alpha1.AggregatedStatusItem{
				{ClusterName: "member1", Applied: true, Health: policyv1alpha1.ResourceUnknown},
				{ClusterName: "member2", AppliedReason: "Conflict", Health: policyv1alpha1.ResourceUnknown},
			},
			want: "member1 (Applied), member2 (Conflict), member3",
		},
		{
			name: "a Deployment keeps its count and health", replicas: 3,
			targets: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
			status: []workv1alpha1.AggregatedStatusItem{
				{ClusterName: "member1", Applied: true, Health: policyv1alpha1.ResourceHealthy},
				{ClusterName: "member2", Applied: true, Health: policyv1alpha1.ResourceUnknown},
			},
			want: "member1=2 (Healthy), member2=1 (Applied)",
		},
	} {
		spec := &workv1alpha1.BindingSpec{Replicas: tc.replicas, Clusters: tc.targets}
		got := placementSummary(spec, &workv1alpha1.BindingStatus{AggregatedStatus: tc.status})
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A workload whose components were divided shows each cluster's
// components and the head cluster; a gang placed whole shows as before.
func TestPlacementSummaryShowsDividedComponents(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{
		DividedComponents: &workv1alpha1.DividedComponents{HeadCluster: "member1"},
		Clusters: []workv1alpha1.TargetCluster{
			{Name: "member1", Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 3}}},
			{Name: "member2", Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 5}}},
			{Name: "member3", State: workv1alpha1.TargetUnscheduled, Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 2}}},
		},
	}
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "member1", Applied: true}, {ClusterName: "member2", Applied: true},
	}}
	want := "member1{head=1,workers=3} (Applied) [head], member2{workers=5} (Applied), member3{workers=2} [leaving]"
	if got := placementSummary(spec, status); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	spec.DividedComponents = nil
	if got := placementSummary(spec, status); got != "member1 (Applied), member2 (Applied), member3 [leaving]" {
		t.Errorf("placed whole: %q", got)
	}
}
