package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// fleetDoc is a scenario of clusters of identical nodes and the same
// workload n times.
func fleetDoc(clusters, nodesPer int, nodeCPU int64, workloads int, replicas int32, cpu int64, scheduling string) string {
	var b strings.Builder
	b.WriteString(`{"name": "in-order", "clusters": [`)
	for i := range clusters {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name": "c%d", "available": {"cpu": %d, "memory": %d, "pods": %d}, "apis": ["apps/v1/Deployment"],
			"nodes": [{"count": %d, "free": {"cpu": %d, "memory": 16384, "pods": 110}}]}`,
			i, int64(nodesPer)*nodeCPU, nodesPer*16384, nodesPer*110, nodesPer, nodeCPU)
	}
	b.WriteString(`], "workloads": [`)
	for i := range workloads {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"namespace": "ns", "name": "w%02d", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": %d,
			"request": {"cpu": %d, "memory": 256}, "placement": {"replicaScheduling": %q}}`, i, replicas, cpu, scheduling)
	}
	b.WriteString("]}")
	return b.String()
}

// scheduleAll schedules every workload of s, in order (each on the room
// the earlier ones left) or each on the fleet as given, and returns each
// workload's targets (nil when unschedulable) and the room at the end.
func scheduleAll(t *testing.T, s *Scenario, inOrder bool) ([][]workv1alpha1.TargetCluster, *Room) {
	t.Helper()
	sched := scheduler.NewDefault()
	r := s.Room()
	var out [][]workv1alpha1.TargetCluster
	for _, w := range s.Workloads {
		snap := s.Snapshot
		if inOrder {
			snap = r.Snapshot()
		}
		res, err := sched.Schedule(context.Background(), snap, w)
		var ue *scheduler.UnschedulableError
		switch {
		case errors.As(err, &ue):
			out = append(out, nil)
			continue
		case err != nil:
			t.Fatal(err)
		}
		out = append(out, res.Targets)
		if inOrder {
			if err := r.Take(w, res.Targets); err != nil {
				t.Fatal(err)
			}
		}
		res.Release()
	}
	return out, r
}

func TestRoomInOrder(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// wantPlaced[i]: the replicas workload i gets in all (0:
		// unschedulable), in order and as given.
		wantInOrder, wantAsGiven []int32
	}{
		{name: "three clusters of 4 × 4 CPU, 20 workloads of 4 × 1 CPU",
			doc:         fleetDoc(3, 4, 4000, 20, 4, 1000, "DynamicWeighted"),
			wantInOrder: []int32{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0},
			wantAsGiven: []int32{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},
		// 4 of the 6 nodes keep 0.5 CPU: 2 one-CPU replicas fit after the
		// first workload, though the sums (5 CPU) would hold 5.
		{name: "a fragmented cluster", doc: fleetDoc(1, 6, 1500, 2, 4, 1000, "Aggregated"),
			wantInOrder: []int32{4, 0}, wantAsGiven: []int32{4, 4}},
		// Duplicated: every cluster runs all 8 replicas; two of 16 CPU
		// each hold two such workloads.
		{name: "duplicated takes room in every cluster", doc: fleetDoc(2, 4, 4000, 3, 8, 1000, "Duplicated"),
			wantInOrder: []int32{16, 16, 0}, wantAsGiven: []int32{16, 16, 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parse(t, tt.doc)
			for _, inOrder := range []bool{true, false} {
				want := tt.wantAsGiven
				if inOrder {
					want = tt.wantInOrder
				}
				targets, _ := scheduleAll(t, s, inOrder)
				var got []int32
				for _, ts := range targets {
					var sum int32
					for _, tc := range ts {
						sum += tc.Replicas
					}
					got = append(got, sum)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("in order %t: replicas placed %v, want %v", inOrder, got, want)
				}
			}
		})
	}
}

// The 12 workloads that place use the fleet's 48 CPUs; the unschedulable
// ones say why.
func TestRoomInOrderUsesTheFleet(t *testing.T) {
	s := parse(t, fleetDoc(3, 4, 4000, 20, 4, 1000, "DynamicWeighted"))
	_, r := scheduleAll(t, s, true)
	snap := r.Snapshot()
	for i := range snap.Len() {
		c := snap.At(i)
		if c.Available.MilliCPU != 0 || c.Available.Pods != 4*110-16 || len(c.Nodes) != 1 || c.Nodes[0].Count != 4 || c.Nodes[0].Free.MilliCPU != 0 {
			t.Errorf("%s after: available %+v, nodes %+v", c.Name, c.Available, c.Nodes)
		}
	}
	// The scenario's own snapshot is as loaded.
	if c := s.Snapshot.At(0); c.Available.MilliCPU != 16000 || c.Nodes[0].Free.MilliCPU != 4000 {
		t.Errorf("the scenario's snapshot changed: %+v", c)
	}
	_, err := scheduler.NewDefault().Schedule(context.Background(), snap, s.Workloads[19])
	if err == nil || !strings.Contains(err.Error(), "insufficient cpu") {
		t.Errorf("the 20th workload: %v, want insufficient cpu", err)
	}
}

// Take counts what a workload gains over its previous placement, leaves
// Unscheduled targets and unknown clusters alone, and builds a new
// snapshot only when it takes something.
func TestRoomTake(t *testing.T) {
	s := parse(t, fleetDoc(2, 4, 4000, 1, 4, 1000, "DynamicWeighted"))
	w := *s.Workloads[0]
	w.Previous = []workv1alpha1.TargetCluster{{Name: "c0", Replicas: 3}, {Name: "c1", Replicas: 2, State: workv1alpha1.TargetUnscheduled}}
	r := s.Room()
	first := r.Snapshot()
	if err := r.Take(&w, []workv1alpha1.TargetCluster{{Name: "c0", Replicas: 2}, {Name: "gone", Replicas: 5}}); err != nil {
		t.Fatal(err)
	}
	if r.Snapshot() != first {
		t.Error("a placement that shrank built a new snapshot")
	}
	if err := r.Take(&w, []workv1alpha1.TargetCluster{{Name: "c0", Replicas: 5}, {Name: "c1", Replicas: 1},
		{Name: "c1", Replicas: 9, State: workv1alpha1.TargetUnscheduled}}); err != nil {
		t.Fatal(err)
	}
	// c0 gains 2 over its 3, c1 1 (its previous target is Unscheduled).
	for name, want := range map[string]int64{"c0": 14000, "c1": 15000} {
		i, _ := r.Snapshot().Index(name)
		if got := r.Snapshot().At(i).Available.MilliCPU; got != want {
			t.Errorf("%s: %d millicores left, want %d", name, got, want)
		}
	}
	if c := first.At(0); c.Available.MilliCPU != 16000 {
		t.Errorf("the first snapshot changed: %+v", c.Available)
	}
}

// BenchmarkRoomTake: one placement on three clusters of a fleet of 5,000
// (each with labels, APIs and a node model); most of it rebuilds the
// snapshot.
func BenchmarkRoomTake(b *testing.B) {
	var clusters []string
	for i := range 5000 {
		clusters = append(clusters, fmt.Sprintf(`{"name": "c%04d", "provider": "p%d", "region": "r%d", "zone": "z%d",
			"labels": {"env": "e%d", "tier": "t%d", "team": "team-%d"}, "available": {"cpu": 64000, "memory": 262144, "pods": 880},
			"apis": ["apps/v1/Deployment", "apps/v1/StatefulSet", "batch/v1/Job", "v1/ConfigMap", "v1/Service", "v1/Secret"],
			"nodes": [{"count": 6, "free": {"cpu": 8000, "memory": 32768, "pods": 110}}, {"count": 2, "free": {"cpu": 8000, "memory": 32768, "pods": 110}}]}`,
			i, i%3, i%10, i%30, i%3, i%5, i%40))
	}
	s, err := Parse(strings.NewReader(`{"clusters": [`+strings.Join(clusters, ",")+`], "workloads": [
		{"name": "w", "apiVersion": "apps/v1", "kind": "Deployment", "replicas": 6, "request": {"cpu": 500, "memory": 512}, "placement": {"replicaScheduling": "DynamicWeighted"}}]}`), now, interpreter.Builtin())
	if err != nil {
		b.Fatal(err)
	}
	targets := []workv1alpha1.TargetCluster{{Name: "c0001", Replicas: 2}, {Name: "c2500", Replicas: 2}, {Name: "c4999", Replicas: 2}}
	r := s.Room()
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Take(s.Workloads[0], targets); err != nil {
			b.Fatal(err)
		}
	}
}

// The example of docs/fleet-scenarios.md does what the text says.
func TestRoomDocsExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "fleet-scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Placing workloads in order")
	_, example, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(example, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no yaml example under \"## Placing workloads in order\"")
	}
	s := parse(t, example)
	for inOrder, want := range map[bool][]int32{true: {4, 0}, false: {4, 4}} {
		targets, _ := scheduleAll(t, s, inOrder)
		var got []int32
		for _, ts := range targets {
			var sum int32
			for _, tc := range ts {
				sum += tc.Replicas
			}
			got = append(got, sum)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("in order %t: replicas placed %v, want %v", inOrder, got, want)
		}
	}
	_, r := scheduleAll(t, s, true)
	if n, limit := r.Snapshot().At(0).Fit(&s.Workloads[1].Request); n != 2 || limit != framework.ResourceNodeRoom {
		t.Errorf("after web, %d replicas of api fit (limit %q), want 2 by the room on any one node", n, limit)
	}
}
