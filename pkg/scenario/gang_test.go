package scenario

import (
	"reflect"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// gangsYAML is one member whose two 10-core nodes hold one RayCluster of
// a 2-core head and four 4-core workers, and two such RayClusters.
const gangsYAML = `
apiVersion: cluster.shepherd.io/v1alpha1
kind: Cluster
metadata: {name: member-3}
spec: {apiEndpoint: "https://m3:6443"}
status:
  conditions: [{type: Ready, status: "True", reason: Probed, message: ok, lastTransitionTime: "2026-01-01T00:00:00Z"}]
  apiEnablements: [{groupVersion: ray.io/v1, resources: [{name: rayclusters, kind: RayCluster}]}]
  resourceSummary:
    allocatable: {cpu: "20", memory: 64Gi, pods: "220"}
    nodes: [{count: 2, free: {cpu: "10", memory: 32Gi, pods: "110"}}]
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: ray}
spec:
  resourceSelectors: [{apiVersion: ray.io/v1, kind: RayCluster}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train-a, namespace: ml}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: ray, resources: {requests: {cpu: "2"}}}]}}}
  workerGroupSpecs: [{groupName: workers, replicas: 4, template: {spec: {containers: [{name: ray, resources: {requests: {cpu: "4"}}}]}}}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train-b, namespace: ml}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: ray, resources: {requests: {cpu: "2"}}}]}}}
  workerGroupSpecs: [{groupName: workers, replicas: 4, template: {spec: {containers: [{name: ray, resources: {requests: {cpu: "4"}}}]}}}]
`

// TestPlanGangsInOrder: a plan reads a template's components as the
// detector writes them, and placing workloads in order takes a gang's
// room from the cluster it lands on: the second RayCluster no longer fits
// where the first went, though each fits the fleet as given.
func TestPlanGangsInOrder(t *testing.T) {
	s := parse(t, gangsYAML)
	want := []framework.Component{
		{Name: "ray-head", Replicas: 1, Request: framework.Resources{MilliCPU: 2000}},
		{Name: "workers", Replicas: 4, Request: framework.Resources{MilliCPU: 4000}},
	}
	if len(s.Workloads) != 2 || !reflect.DeepEqual(s.Workloads[0].Components, want) {
		t.Fatalf("workloads %+v, want two with components %+v", s.Workloads, want)
	}
	gang := []workv1alpha1.TargetCluster{{Name: "member-3",
		Components: []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}}}
	for _, tc := range []struct {
		inOrder bool
		want    [][]workv1alpha1.TargetCluster
	}{
		{false, [][]workv1alpha1.TargetCluster{gang, gang}},
		{true, [][]workv1alpha1.TargetCluster{gang, nil}},
	} {
		if got, _ := scheduleAll(t, s, tc.inOrder); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("in order %v: got %+v, want %+v", tc.inOrder, got, tc.want)
		}
	}
}
