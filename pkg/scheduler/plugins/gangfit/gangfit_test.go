package gangfit

import (
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

const gib = int64(1) << 30

// nodes is a node model of count nodes with cpu cores and memGiB free each.
func nodes(count, cpu, memGiB int64) framework.NodeRoom {
	return framework.NodeRoom{Count: count, Free: framework.Resources{MilliCPU: cpu * 1000, Memory: memGiB * gib, Pods: 110}}
}

// cluster sums its node model into Available, as a member reports both.
func cluster(name string, model ...framework.NodeRoom) framework.ClusterInfo {
	ci := framework.ClusterInfo{Name: name, Nodes: model}
	for _, g := range model {
		ci.Available.MilliCPU += g.Count * g.Free.MilliCPU
		ci.Available.Memory += g.Count * g.Free.Memory
		ci.Available.Pods += g.Count * g.Free.Pods
	}
	return ci
}

func comp(name string, replicas int32, cpu, memGiB int64) framework.Component {
	return framework.Component{Name: name, Replicas: replicas, Request: framework.Resources{MilliCPU: cpu * 1000, Memory: memGiB * gib}}
}

func TestFilter(t *testing.T) {
	head, workers := comp("head", 1, 2, 4), comp("workers", 4, 4, 8)
	tests := []struct {
		name       string
		cluster    framework.ClusterInfo
		components []framework.Component
		previous   []workv1alpha1.TargetCluster
		want       string
	}{
		{name: "fits exactly: head and two workers on each of two nodes",
			cluster: cluster("m1", nodes(1, 10, 20), nodes(1, 8, 16)), components: []framework.Component{head, workers}},
		{name: "the summed room of two nodes is not enough: a replica fits on one node",
			// 18 cores summed hold 2 + 4×4; node by node, the head takes
			// 2 of the 9-core node (7 left: one worker) and the other
			// holds two workers: 3 of 4.
			cluster: cluster("member2", nodes(2, 9, 32)), components: []framework.Component{head, workers},
			want: `component "workers" (4 × cpu 4, memory 8Gi) does not fit: 3 of 4 fit on the nodes of member2`},
		{name: "the first component that does not fit is named",
			cluster: cluster("m1", nodes(4, 1, 32)), components: []framework.Component{head, workers},
			want: `component "head" (1 × cpu 2, memory 4Gi) does not fit: 0 of 1 fit on the nodes of m1`},
		{name: "no node model: the summed room counts",
			cluster:    framework.ClusterInfo{Name: "flat", Available: framework.Resources{MilliCPU: 18000, Memory: 64 * gib, Pods: 110}},
			components: []framework.Component{head, workers}},
		{name: "no node model, short of the sums",
			cluster:    framework.ClusterInfo{Name: "flat", Available: framework.Resources{MilliCPU: 12000, Memory: 64 * gib, Pods: 110}},
			components: []framework.Component{head, workers},
			want:       `component "workers" (4 × cpu 4, memory 8Gi) does not fit: 2 of 4 fit in the free room of flat`},
		{name: "a component of zero replicas takes nothing",
			cluster: cluster("m1", nodes(1, 2, 4)), components: []framework.Component{head, comp("workers", 0, 64, 8)}},
		{name: "a component asking for nothing takes nothing",
			cluster: cluster("m1", nodes(1, 2, 4)), components: []framework.Component{head, {Name: "sidecar", Replicas: 50}}},
		{name: "pods run out",
			cluster: framework.ClusterInfo{Name: "m1", Nodes: []framework.NodeRoom{{Count: 1, Free: framework.Resources{MilliCPU: 64000, Memory: 256 * gib, Pods: 3}}},
				Available: framework.Resources{MilliCPU: 64000, Memory: 256 * gib, Pods: 3}},
			components: []framework.Component{head, workers},
			want:       `component "workers" (4 × cpu 4, memory 8Gi) does not fit: 2 of 4 fit on the nodes of m1`},
		{name: "a cluster running the gang needs room only for what it gains",
			cluster: cluster("m1", nodes(1, 8, 16)), components: []framework.Component{head, comp("workers", 6, 4, 8)},
			previous: []workv1alpha1.TargetCluster{{Name: "m1", State: workv1alpha1.TargetBound,
				Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 4}}}}},
		{name: "... and is refused when that does not fit",
			cluster: cluster("m1", nodes(1, 4, 16)), components: []framework.Component{head, comp("workers", 6, 4, 8)},
			previous: []workv1alpha1.TargetCluster{{Name: "m1", State: workv1alpha1.TargetBound,
				Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 4}}}},
			want: `component "workers" (2 × cpu 4, memory 8Gi) does not fit: 1 of 2 fit on the nodes of m1`},
		{name: "a target placed before components were known runs the whole gang",
			cluster: cluster("m1", nodes(1, 1, 1)), components: []framework.Component{head, workers},
			previous: []workv1alpha1.TargetCluster{{Name: "m1", State: workv1alpha1.TargetBound}}},
		{name: "a cluster the gang is leaving holds nothing of it",
			cluster: cluster("m1", nodes(1, 4, 16)), components: []framework.Component{head, comp("workers", 6, 4, 8)},
			previous: []workv1alpha1.TargetCluster{{Name: "m1", State: workv1alpha1.TargetUnscheduled,
				Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 6}}}},
			want: `component "workers" (6 × cpu 4, memory 8Gi) does not fit: 0 of 6 fit on the nodes of m1`},
		{name: "extended resources are named",
			cluster: cluster("m1", nodes(2, 16, 64)),
			components: []framework.Component{{Name: "trainer", Replicas: 1,
				Request: framework.Resources{MilliCPU: 500, Scalars: []framework.ScalarResource{{Name: "nvidia.com/gpu", Value: 1}}}}},
			want: `component "trainer" (1 × cpu 500m, nvidia.com/gpu 1) does not fit: 0 of 1 fit on the nodes of m1`},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Kind: "RayCluster", Components: tt.components, Previous: tt.previous}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), fwtest.Snapshot(t, tt.cluster), w)
			if msg := got[tt.cluster.Name].Message(); msg != tt.want {
				t.Errorf("got %q, want %q", msg, tt.want)
			}
		})
	}
}

// TestOrderMatters: components are taken in the order the workload lists
// them, spread as the member's scheduler spreads pods (each on the node
// with the most room for it). Two small pods first land on both nodes and
// leave neither with room for the large one; the large one first leaves a
// whole node to the small ones.
func TestOrderMatters(t *testing.T) {
	small, large := comp("small", 2, 2, 1), comp("large", 1, 6, 1)
	snap := fwtest.Snapshot(t, cluster("m1", nodes(2, 6, 16)))
	p, _ := New(nil)
	for _, tt := range []struct {
		order []framework.Component
		want  string
	}{
		{[]framework.Component{large, small}, ""},
		{[]framework.Component{small, large}, `component "large" (1 × cpu 6, memory 1Gi) does not fit: 0 of 1 fit on the nodes of m1`},
	} {
		w := &framework.Workload{Components: tt.order}
		if got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)["m1"].Message(); got != tt.want {
			t.Errorf("%s first: got %q, want %q", tt.order[0].Name, got, tt.want)
		}
	}
}

// TestSkipsOtherWorkloads: a workload without components, or whose
// components ask for nothing, is not the plugin's: every cluster passes
// (ResourceFit judges replicas). Nor is a gang whose components are
// divided over clusters: no one cluster must hold it whole (the scheduler
// fits its parts itself).
func TestSkipsOtherWorkloads(t *testing.T) {
	snap := fwtest.Snapshot(t, framework.ClusterInfo{Name: "empty"})
	p, _ := New(nil)
	for _, w := range []*framework.Workload{
		{Kind: "Deployment", Replicas: 3, Request: framework.Resources{MilliCPU: 1000}},
		{Kind: "RayCluster", Components: []framework.Component{{Name: "head", Replicas: 1}}},
		{Kind: "RayCluster", Components: []framework.Component{comp("workers", 0, 4, 8)}},
		{Kind: "WorkerPool", DivideComponents: true, Components: []framework.Component{comp("head", 1, 2, 4), comp("workers", 4, 4, 8)}},
	} {
		if st := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)["empty"]; st != nil {
			t.Errorf("%s %+v: rejected with %q", w.Kind, w.Components, st.Message())
		}
	}
}
