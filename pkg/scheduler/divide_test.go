package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// divideIndependent is a placement dividing a workload's components.
func divideIndependent() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}}
}

// workerPool is a WorkerPool that divides: a head of headCPU cores, not
// divisible, and a divisible group of workers of workerCPU cores each.
func workerPool(headCPU, workerCPU int64, workers int32) *framework.Workload {
	return &framework.Workload{
		Namespace: "default", Name: "pool", APIVersion: "example.io/v1", Kind: "WorkerPool", UID: "uid-pool", Now: testNow,
		Placement: divideIndependent(), DivideComponents: true,
		Components: []framework.Component{
			{Name: "head", Replicas: 1, Request: framework.Resources{MilliCPU: headCPU * 1000, Memory: gib}},
			{Name: "workers", Replicas: workers, Request: framework.Resources{MilliCPU: workerCPU * 1000, Memory: gib}, Divisible: true},
		},
	}
}

// poolMember serves WorkerPools on the nodes given, each of cpu cores
// (plenty of memory and pods).
func poolMember(name string, nodes ...[2]int64) framework.ClusterInfo {
	c := cluster(name, "aws", "r1", "z1", nil)
	c.APIs = append(c.APIs, "example.io/v1/WorkerPool")
	c.Available = framework.Resources{}
	for _, n := range nodes {
		g := framework.NodeRoom{Count: n[0], Free: framework.Resources{MilliCPU: n[1] * 1000, Memory: 64 * gib, Pods: 110}}
		c.Nodes = append(c.Nodes, g)
		c.Available.MilliCPU += g.Count * g.Free.MilliCPU
		c.Available.Memory += g.Count * g.Free.Memory
		c.Available.Pods += g.Count * g.Free.Pods
	}
	return c
}

// on is a target holding the components given as name, replicas, ...
func on(cluster string, components ...any) workv1alpha1.TargetCluster {
	t := workv1alpha1.TargetCluster{Name: cluster}
	for i := 0; i < len(components); i += 2 {
		t.Components = append(t.Components, workv1alpha1.TargetComponent{Name: components[i].(string), Replicas: int32(components[i+1].(int))})
	}
	return t
}

// The fleet of the division tests: the 8-core head fits only on m2's one
// 10-core node; m1's two 4-core nodes hold four 2-core workers, m3's three
// six, m2 one beside the head.
func divisionFleet(t *testing.T) *framework.Snapshot {
	return snapshot(t, poolMember("m1", [2]int64{2, 4}), poolMember("m2", [2]int64{1, 10}), poolMember("m3", [2]int64{3, 4}))
}

// The head goes whole to the one cluster whose nodes hold it; the workers
// are divided by room node by node, counting what the head took there.
func TestDivideComponents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers int32
		want    []workv1alpha1.TargetCluster
	}{
		// m3 alone holds six workers: the best clusters are taken until
		// they hold them all (as dynamic weights take them).
		{"workers on the roomiest cluster", 6, []workv1alpha1.TargetCluster{on("m2", "head", 1), on("m3", "workers", 6)}},
		// Nine need m3 and m1, divided in proportion to their room, 6:4.
		{"workers divided by room", 9, []workv1alpha1.TargetCluster{on("m1", "workers", 4), on("m2", "head", 1), on("m3", "workers", 5)}},
		// Eleven need every cluster, m2's one core pair beside the head too.
		{"every cluster full", 11, []workv1alpha1.TargetCluster{on("m1", "workers", 4), on("m2", "head", 1, "workers", 1), on("m3", "workers", 6)}},
		// No workers: the head alone.
		{"no workers", 0, []workv1alpha1.TargetCluster{on("m2", "head", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := NewDefault().Schedule(context.Background(), divisionFleet(t), workerPool(8, 2, tc.workers))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Release()
			if !reflect.DeepEqual(res.Targets, tc.want) {
				t.Errorf("targets %+v, want %+v", res.Targets, tc.want)
			}
			if res.Division == nil || res.Division.HeadCluster != "m2" {
				t.Errorf("division %+v, want the head on m2", res.Division)
			}
		})
	}
}

// When a divisible component's replicas do not fit in the sum of room,
// or the head fits nowhere, the workload is Unschedulable with a reason
// naming the component and what fits where, and nothing is placed.
func TestDivideComponentsDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *framework.Workload
		want string
	}{
		{"workers past the room", workerPool(8, 2, 12),
			`3/3 clusters available: components: component "workers" (12 × cpu 2, memory 1Gi) does not fit: 11 of 12 fit in the room of the clusters (m3 6, m1 4, m2 1), with the head on m2`},
		{"a head too large", workerPool(12, 2, 4),
			`3/3 clusters available: components: the components that are not divisible fit together on no cluster: ` +
				`component "head" (1 × cpu 12, memory 1Gi) does not fit: 0 of 1 fit on the nodes of m1; ` +
				`component "head" (1 × cpu 12, memory 1Gi) does not fit: 0 of 1 fit on the nodes of m2; ` +
				`component "head" (1 × cpu 12, memory 1Gi) does not fit: 0 of 1 fit on the nodes of m3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := NewDefault().Schedule(context.Background(), divisionFleet(t), tc.w)
			var ue *UnschedulableError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want an UnschedulableError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("reason:\n got %s\nwant %s", err, tc.want)
			}
			if res == nil || len(res.Targets) != 0 || res.Division != nil {
				t.Fatalf("want a result placing nothing, got %+v", res)
			}
			for _, e := range res.Explanations() {
				if e.Selected || !strings.Contains(e.Reason, "feasible, but no placement exists: ") || !strings.Contains(tc.want, e.Reason[len("feasible, but no placement exists: "):]) {
					t.Errorf("%s explained as %+v", e.Cluster, e)
				}
			}
			res.Release()
		})
	}
}

// The head candidates are tried in order: when the head on the best one
// leaves the workers too little room, the next one is tried. On a, the
// 6-core head takes the 8-core node, leaving room for one 4-core worker;
// on b it leaves b one and a three: only the head on b holds four.
func TestDivideComponentsTriesTheNextHead(t *testing.T) {
	snap := snapshot(t, poolMember("a", [2]int64{1, 6}, [2]int64{1, 8}), poolMember("b", [2]int64{1, 10}))
	res, err := NewDefault().Schedule(context.Background(), snap, workerPool(6, 4, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	want := []workv1alpha1.TargetCluster{on("a", "workers", 3), on("b", "head", 1, "workers", 1)}
	if !reflect.DeepEqual(res.Targets, want) || res.Division.HeadCluster != "b" {
		t.Errorf("targets %+v, head %+v; want %+v with the head on b", res.Targets, res.Division, want)
	}
	// Three workers fit with the head on a, the first by name.
	res3, err := NewDefault().Schedule(context.Background(), snap, workerPool(6, 4, 3))
	if err != nil {
		t.Fatal(err)
	}
	defer res3.Release()
	if res3.Division.HeadCluster != "a" {
		t.Errorf("head on %s, want a (equal scores, first by name): %+v", res3.Division.HeadCluster, res3.Targets)
	}
}

// A Steady cycle keeps a placement in force: the head stays where it is
// even when a roomier cluster joins, the shares stay, and a scale-up
// adds only the new workers, by room.
func TestDivideComponentsStable(t *testing.T) {
	w := workerPool(8, 2, 9)
	first, err := NewDefault().Schedule(context.Background(), divisionFleet(t), w)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	again := func(workers int32, snap *framework.Snapshot) []workv1alpha1.TargetCluster {
		t.Helper()
		w2 := workerPool(8, 2, workers)
		w2.Previous, w2.PreviousHead = first.Targets, first.Division.HeadCluster
		res, err := NewDefault().Schedule(context.Background(), snap, w2)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Release()
		if res.Division.HeadCluster != "m2" {
			t.Errorf("the head moved to %s", res.Division.HeadCluster)
		}
		return res.Targets
	}
	// The running replicas hold room the clusters report as used: what
	// is left of it is not what the first cycle saw, and nothing moves.
	roomier := snapshot(t, poolMember("m0", [2]int64{4, 32}), poolMember("m1"), poolMember("m2", [2]int64{1, 2}), poolMember("m3", [2]int64{1, 2}))
	for _, snap := range []*framework.Snapshot{divisionFleet(t), roomier} {
		if got := again(9, snap); !reflect.DeepEqual(got, first.Targets) {
			t.Errorf("unchanged workload moved: %+v, was %+v", got, first.Targets)
		}
	}
	// Two more workers go where there is room, the others stay: the
	// clusters that run the workload first (m3 has room for one more, m2
	// beside the head for one), before the roomier m0, which runs none.
	got := again(11, roomier)
	want := []workv1alpha1.TargetCluster{on("m1", "workers", 4), on("m2", "head", 1, "workers", 1), on("m3", "workers", 6)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scale-up: %+v, want %+v", got, want)
	}
}

// Equal clusters: the head goes to the first by name, and an odd number
// of workers over two clusters of equal room splits by the tie rule of
// divided replicas (the template's UID draws the direction by name), the
// same every time, whatever order the fleet is given in.
func TestDivideComponentsTies(t *testing.T) {
	fleet := []framework.ClusterInfo{poolMember("x", [2]int64{2, 10}), poolMember("y", [2]int64{2, 10}), poolMember("z", [2]int64{2, 10})}
	for uid, want := range map[string][]workv1alpha1.TargetCluster{
		"uid-pool": {on("x", "head", 1), on("y", "workers", 8), on("z", "workers", 7)},
		"uid-a":    {on("x", "head", 1), on("y", "workers", 7), on("z", "workers", 8)},
	} {
		for i := range 10 {
			shuffled := slices.Clone(fleet)
			rand.New(rand.NewPCG(uint64(i), 7)).Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			// x holds six 2-core workers beside the head, y and z ten
			// each: fifteen go to y and z, the roomiest, half each.
			w := workerPool(8, 2, 15)
			w.UID = uid
			res, err := NewDefault().Schedule(context.Background(), snapshot(t, shuffled...), w)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Targets, want) || res.Division.HeadCluster != "x" {
				t.Fatalf("%s, fleet order %d: %+v head %s, want %+v head x", uid, i, res.Targets, res.Division.HeadCluster, want)
			}
			res.Release()
		}
	}
}

// Every component divisible: no head cluster; a workload that is not
// asked to divide, or cannot, is placed whole (GangFit decides), with the
// reason when it was asked.
func TestDivideComponentsWithoutHeadAndWhole(t *testing.T) {
	w := workerPool(2, 2, 4)
	w.Components[0].Divisible = true
	res, err := NewDefault().Schedule(context.Background(), divisionFleet(t), w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Division == nil || res.Division.HeadCluster != "" {
		t.Errorf("division %+v, want one without a head", res.Division)
	}
	for _, tc := range res.Targets {
		for _, c := range tc.Components {
			if c.Name == "head" && c.Replicas != 1 {
				t.Errorf("head divided as %+v", res.Targets)
			}
		}
	}
	res.Release()

	whole := workerPool(8, 2, 6)
	whole.DivideComponents, whole.NotDivided = false, "component \"head\" has no replicasPath"
	res, err = NewDefault().Schedule(context.Background(), divisionFleet(t), whole)
	var ue *UnschedulableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `component "workers" (6 × cpu 2, memory 1Gi) does not fit`) {
		t.Fatalf("placed whole, no cluster holds it all: got %v", err)
	}
	res.Release()
	whole.Components[1].Replicas = 1
	res, err = NewDefault().Schedule(context.Background(), divisionFleet(t), whole)
	if err != nil {
		t.Fatal(err)
	}
	if want := []workv1alpha1.TargetCluster{on("m2", "head", 1, "workers", 1)}; !reflect.DeepEqual(res.Targets, want) || res.Division != nil || res.NotDivided != whole.NotDivided {
		t.Errorf("placed whole: %+v %+v %q", res.Targets, res.Division, res.NotDivided)
	}
	res.Release()
}

// FuzzDivideComponents: on random fleets (node models or sums alone, room
// already taken), with random heads and divisible components, a division
// places every divisible component's replicas exactly once in all, each
// head component whole on exactly one cluster, and no cluster beyond its
// room: taking, cluster by cluster, the head and then each component's
// share in the workload's order, every replica finds room. A Steady cycle
// with the result in place returns it unchanged. A workload that does not
// fit places nothing.
func FuzzDivideComponents(f *testing.F) {
	for _, seed := range [][2]uint64{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {42, 42}, {9, 1}} {
		f.Add(seed[0], seed[1])
	}
	s := NewDefault()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, a, b uint64) {
		r := rand.New(rand.NewPCG(a, b))
		fleet := make([]framework.ClusterInfo, 1+r.IntN(6))
		for i := range fleet {
			var nodes [][2]int64
			for range 1 + r.IntN(3) {
				nodes = append(nodes, [2]int64{1 + int64(r.IntN(4)), 1 + int64(r.IntN(16))})
			}
			fleet[i] = poolMember(fmt.Sprintf("c%d", i), nodes...)
			if r.IntN(4) == 0 {
				fleet[i].Nodes = nil // the sums alone
			}
			if r.IntN(4) == 0 {
				fleet[i] = fleet[i].Take(&framework.Resources{MilliCPU: 1000}, int64(r.IntN(8))) // in flight
			}
		}
		w := workerPool(1, 1, 0)
		w.UID = fmt.Sprintf("uid-%d", r.IntN(5))
		w.Components = nil
		for i := range r.IntN(3) {
			w.Components = append(w.Components, framework.Component{Name: fmt.Sprintf("head%d", i), Replicas: int32(r.IntN(3)),
				Request: framework.Resources{MilliCPU: int64(r.IntN(9)) * 500, Memory: gib}})
		}
		for i := range 1 + r.IntN(3) {
			w.Components = append(w.Components, framework.Component{Name: fmt.Sprintf("part%d", i), Replicas: int32(r.IntN(40)), Divisible: true,
				Request: framework.Resources{MilliCPU: int64(r.IntN(9)) * 500, Memory: int64(r.IntN(3)) * gib}})
		}
		r.Shuffle(len(w.Components), func(i, j int) { w.Components[i], w.Components[j] = w.Components[j], w.Components[i] })
		snap := snapshot(t, fleet...)
		res, err := s.Schedule(ctx, snap, w)
		var ue *UnschedulableError
		if errors.As(err, &ue) {
			if len(res.Targets) != 0 || res.Division != nil || !strings.Contains(err.Error(), "component") {
				t.Fatalf("unschedulable (%v) but placed %+v %+v", err, res.Targets, res.Division)
			}
			res.Release()
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		res.Release()
		checkDivision(t, snap, w, res.Targets, res.Division)

		w2 := *w
		w2.Previous, w2.PreviousHead = res.Targets, res.Division.HeadCluster
		res2, err := s.Schedule(ctx, snap, &w2)
		if err != nil {
			t.Fatalf("the placement in force became unschedulable: %v\nwas %+v", err, res.Targets)
		}
		res2.Release()
		if !reflect.DeepEqual(res2.Targets, res.Targets) || *res2.Division != *res.Division {
			t.Fatalf("steady cycle moved it:\nwas %+v %+v\nnow %+v %+v", res.Targets, res.Division, res2.Targets, res2.Division)
		}
	})
}

// checkDivision holds a division to its invariants (see
// FuzzDivideComponents): on each target, the head (on the head cluster)
// and then each divisible component's share, in the workload's order, fit
// in the room left by the ones before.
func checkDivision(t *testing.T, snap *framework.Snapshot, w *framework.Workload, targets []workv1alpha1.TargetCluster, d *workv1alpha1.DividedComponents) {
	t.Helper()
	if d == nil {
		t.Fatalf("no division: %+v", targets)
	}
	if !slices.IsSortedFunc(targets, func(a, b workv1alpha1.TargetCluster) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("targets not sorted: %+v", targets)
	}
	placed := map[string]int32{}
	heads := map[string][]string{}
	for _, tc := range targets {
		i, ok := snap.Index(tc.Name)
		if !ok {
			t.Fatalf("target %s is no cluster", tc.Name)
		}
		room := *snap.At(i)
		share := map[string]int32{}
		for _, x := range tc.Components {
			share[x.Name] = x.Replicas
		}
		for _, divisible := range []bool{false, true} {
			for _, c := range w.Components {
				n, listed := share[c.Name]
				if c.Divisible != divisible || !listed {
					if !c.Divisible && !listed && tc.Name == d.HeadCluster {
						t.Fatalf("head component %s missing on the head cluster %s: %+v", c.Name, tc.Name, targets)
					}
					continue
				}
				placed[c.Name] += n
				if !c.Divisible {
					heads[c.Name] = append(heads[c.Name], tc.Name)
					if n != c.Replicas {
						t.Fatalf("head component %s has %d of %d replicas on %s", c.Name, n, c.Replicas, tc.Name)
					}
				}
				if fit, _ := room.Fit(&c.Request); int64(n) > fit {
					t.Fatalf("%s takes %d of component %s where %d fit: %+v", tc.Name, n, c.Name, fit, targets)
				}
				room = room.Take(&c.Request, int64(n))
			}
		}
	}
	for _, c := range w.Components {
		switch {
		case c.Divisible && placed[c.Name] != c.Replicas:
			t.Fatalf("component %s: %d replicas placed, want %d: %+v", c.Name, placed[c.Name], c.Replicas, targets)
		case !c.Divisible && (len(heads[c.Name]) != 1 || heads[c.Name][0] != d.HeadCluster):
			t.Fatalf("head component %s on %v, want only the head cluster %q", c.Name, heads[c.Name], d.HeadCluster)
		}
	}
}
