package framework

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const gpu = "nvidia.com/gpu"

// room is cpu (millicores), memory (bytes) and pods, then extended
// resources as name, value pairs.
func room(cpu, memory, pods int64, scalars ...any) Resources {
	r := Resources{MilliCPU: cpu, Memory: memory, Pods: pods}
	for i := 0; i < len(scalars); i += 2 {
		r.Scalars = append(r.Scalars, ScalarResource{Name: corev1.ResourceName(scalars[i].(string)), Value: int64(scalars[i+1].(int))})
	}
	return r
}

func nodes(groups ...any) []NodeRoom {
	var out []NodeRoom
	for i := 0; i < len(groups); i += 2 {
		out = append(out, NodeRoom{Count: int64(groups[i].(int)), Free: groups[i+1].(Resources)})
	}
	return out
}

func TestTake(t *testing.T) {
	cpu := func(m int64) *Resources { return &Resources{MilliCPU: m} }
	tests := []struct {
		name      string
		available Resources
		nodes     []NodeRoom
		req       *Resources
		n         int64
		// wantAvailable, wantNodes: the cluster's room after.
		wantAvailable Resources
		wantNodes     []NodeRoom
	}{
		{name: "sums alone", available: room(4000, 8<<30, 10), req: &Resources{MilliCPU: 1000, Memory: 1 << 30}, n: 3,
			wantAvailable: room(1000, 5<<30, 7)},
		{name: "sums floored at zero", available: room(4000, 8<<30, 10), req: cpu(1000), n: 5,
			wantAvailable: room(0, 8<<30, 5)},
		{name: "nothing taken", available: room(4000, 0, 10), nodes: nodes(2, room(2000, 0, 5)), req: cpu(1000), n: 0,
			wantAvailable: room(4000, 0, 10), wantNodes: nodes(2, room(2000, 0, 5))},
		{name: "one replica splits a group", available: room(16000, 0, 40), nodes: nodes(4, room(4000, 0, 10)), req: cpu(1000), n: 1,
			wantAvailable: room(15000, 0, 39), wantNodes: nodes(3, room(4000, 0, 10), 1, room(3000, 0, 9))},
		{name: "replicas spread one a node", available: room(8000, 0, 20), nodes: nodes(2, room(4000, 0, 10)), req: cpu(2000), n: 2,
			wantAvailable: room(4000, 0, 18), wantNodes: nodes(2, room(2000, 0, 9))},
		{name: "fragmented nodes", available: room(9000, 0, 600), nodes: nodes(6, room(1500, 0, 100)), req: cpu(1000), n: 4,
			wantAvailable: room(5000, 0, 596), wantNodes: nodes(2, room(1500, 0, 100), 4, room(500, 0, 99))},
		{name: "one node takes all", available: room(4000, 0, 10), nodes: nodes(1, room(4000, 0, 10)), req: cpu(1000), n: 4,
			wantAvailable: room(0, 0, 6), wantNodes: nodes(1, room(0, 0, 6))},
		// One at a time: the big node takes 6 (down to the 2 that fit on
		// the others); then all four fit 2, and the nodes with more free
		// pods take the last two.
		{name: "the roomiest node first, until it is level", available: room(14000, 0, 40), nodes: nodes(3, room(2000, 0, 10), 1, room(8000, 0, 10)),
			req: cpu(1000), n: 8,
			wantAvailable: room(6000, 0, 32), wantNodes: nodes(1, room(2000, 0, 10), 1, room(2000, 0, 4), 2, room(1000, 0, 9))},
		{name: "most replicas that fit, not most cpu", available: room(5000, 0, 11), nodes: nodes(1, room(3000, 0, 1), 1, room(2000, 0, 10)), req: cpu(1000), n: 1,
			wantAvailable: room(4000, 0, 10), wantNodes: nodes(1, room(3000, 0, 1), 1, room(1000, 0, 9))},
		{name: "as many fit: more memory wins", available: room(4000, 3<<30, 20), nodes: nodes(1, room(2000, 1<<30, 10), 1, room(2000, 2<<30, 10)), req: cpu(1000), n: 1,
			wantAvailable: room(3000, 3<<30, 19), wantNodes: nodes(1, room(2000, 1<<30, 10), 1, room(1000, 2<<30, 9))},
		{name: "replicas beyond the nodes take nothing there", available: room(4000, 0, 10), nodes: nodes(2, room(1000, 0, 5)), req: cpu(1000), n: 3,
			wantAvailable: room(1000, 0, 7), wantNodes: nodes(2, room(0, 0, 4))},
		{name: "a request of nothing takes pods", available: room(1000, 0, 10), nodes: nodes(1, room(1000, 0, 3)), req: &Resources{}, n: 2,
			wantAvailable: room(1000, 0, 8), wantNodes: nodes(1, room(1000, 0, 1))},
		{name: "extended resources", available: room(8000, 0, 20, gpu, 4), nodes: nodes(2, room(4000, 0, 10, gpu, 2)),
			req: &Resources{MilliCPU: 1000, Scalars: []ScalarResource{{Name: gpu, Value: 2}}}, n: 1,
			wantAvailable: room(7000, 0, 19, gpu, 2), wantNodes: nodes(1, room(4000, 0, 10, gpu, 2), 1, room(3000, 0, 9))},
		{name: "groups of the same room merge", available: room(6000, 0, 30), nodes: nodes(1, room(3000, 0, 10), 2, room(2000, 0, 9)), req: cpu(1000), n: 1,
			wantAvailable: room(5000, 0, 29), wantNodes: nodes(3, room(2000, 0, 9))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ci := ClusterInfo{Name: "c", Available: tt.available, Nodes: tt.nodes}
			before := fmt.Sprint(ci)
			got := ci.Take(tt.req, tt.n)
			if !reflect.DeepEqual(got.Available, tt.wantAvailable) {
				t.Errorf("available %+v, want %+v", got.Available, tt.wantAvailable)
			}
			if !reflect.DeepEqual(got.Nodes, tt.wantNodes) {
				t.Errorf("nodes %+v, want %+v", got.Nodes, tt.wantNodes)
			}
			if fmt.Sprint(ci) != before {
				t.Errorf("the input changed: %s, was %s", fmt.Sprint(ci), before)
			}
		})
	}
}
