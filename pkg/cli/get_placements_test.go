package cli

import (
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
