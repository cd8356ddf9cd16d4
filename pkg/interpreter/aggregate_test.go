package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func TestAggregateStatus(t *testing.T) {
	items := []workv1alpha1.AggregatedStatusItem{
		{ClusterName: "m1", Status: raw(`{"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"observedGeneration":7}`)},
		{ClusterName: "m2", Status: raw(`{"replicas":2,"readyReplicas":1,"unavailableReplicas":1}`)},
		{ClusterName: "m3"},
		{ClusterName: "m4", Status: raw(`not json`)},
	}
	got, ok := New().AggregateStatus(schema.GroupKind{Group: "apps", Kind: "Deployment"}, items)
	want := map[string]int64{"replicas": 5, "readyReplicas": 4, "availableReplicas": 3, "updatedReplicas": 3, "unavailableReplicas": 1}
	if !ok || len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %d", k, got[k], v)
		}
	}
	job, ok := New().AggregateStatus(schema.GroupKind{Group: "batch", Kind: "Job"}, []workv1alpha1.AggregatedStatusItem{
		{Status: raw(`{"active":1,"succeeded":2}`)}, {Status: raw(`{"failed":1,"succeeded":1}`)},
	})
	if !ok || job["active"] != int64(1) || job["succeeded"] != int64(3) || job["failed"] != int64(1) {
		t.Errorf("job: %v", job)
	}
	if _, ok := New().AggregateStatus(schema.GroupKind{Kind: "ConfigMap"}, items); ok {
		t.Error("ConfigMap status is not summed")
	}
}
