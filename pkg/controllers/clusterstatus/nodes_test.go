package clusterstatus

import (
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

func sameGroups(a, b []clusterv1alpha1.NodeGroup) bool {
	return slices.EqualFunc(a, b, func(x, y clusterv1alpha1.NodeGroup) bool {
		if x.Count != y.Count || len(x.Free) != len(y.Free) {
			return false
		}
		for k, q := range y.Free {
			if g, ok := x.Free[k]; !ok || g.Cmp(q) != 0 {
				return false
			}
		}
		return true
	})
}

func TestFreeRoom(t *testing.T) {
	cases := []struct {
		name  string
		alloc corev1.ResourceList
		pods  []corev1.ResourceList
		want  corev1.ResourceList
	}{
		{"empty node", rl("cpu", "4", "memory", "8Gi", "pods", "110"), nil, rl("cpu", "4", "memory", "8Gi", "pods", "110")},
		{"two pods", rl("cpu", "4", "memory", "8Gi", "pods", "110"), []corev1.ResourceList{rl("cpu", "1500m"), rl("cpu", "500m", "memory", "1Gi")},
			rl("cpu", "2", "memory", "7Gi", "pods", "108")},
		{"overcommitted: floored at zero", rl("cpu", "1", "pods", "1"), []corev1.ResourceList{rl("cpu", "2"), rl("cpu", "1")},
			rl("cpu", "0", "pods", "0")},
		{"a request the node does not offer is not room", rl("cpu", "1", "pods", "10"), []corev1.ResourceList{rl("nvidia.com/gpu", "1")},
			rl("cpu", "1", "pods", "9")},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := freeRoom(tt.alloc, tt.pods)
			if !sameGroups([]clusterv1alpha1.NodeGroup{{Free: got}}, []clusterv1alpha1.NodeGroup{{Free: tt.want}}) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodeGroups(t *testing.T) {
	big, small := rl("cpu", "4", "memory", "16Gi", "pods", "110"), rl("cpu", "1500m", "memory", "4Gi", "pods", "110")
	cases := []struct {
		name  string
		rooms []corev1.ResourceList
		max   int
		want  []clusterv1alpha1.NodeGroup
	}{
		{"no nodes", nil, 4, []clusterv1alpha1.NodeGroup{}},
		{"one pool is one group", []corev1.ResourceList{big, big, big}, 4, []clusterv1alpha1.NodeGroup{{Count: 3, Free: big}}},
		{"two pools, in any order", []corev1.ResourceList{big, small, big, small, small}, 4,
			[]clusterv1alpha1.NodeGroup{{Count: 3, Free: small}, {Count: 2, Free: big}}},
		{"over the bound: runs of neighbours, each the least of its nodes", []corev1.ResourceList{
			rl("cpu", "1", "memory", "8Gi"), rl("cpu", "2", "memory", "2Gi"), rl("cpu", "3", "memory", "4Gi"), rl("cpu", "4", "memory", "1Gi")}, 2,
			[]clusterv1alpha1.NodeGroup{{Count: 2, Free: rl("cpu", "1", "memory", "2Gi")}, {Count: 2, Free: rl("cpu", "3", "memory", "1Gi")}}},
		{"a resource missing from one node of a group is missing from the group", []corev1.ResourceList{
			rl("cpu", "1", "nvidia.com/gpu", "1"), rl("cpu", "1"), rl("cpu", "8")}, 2,
			[]clusterv1alpha1.NodeGroup{{Count: 1, Free: rl("cpu", "1")}, {Count: 2, Free: rl("cpu", "1")}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeGroups(tt.rooms, tt.max)
			if !sameGroups(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// fitOn is how many replicas requesting req fit on a node with room free,
// each replica also taking a pod: the per-node truth the model must not
// exceed.
func fitOn(free, req corev1.ResourceList) int64 {
	n := free.Pods().Value()
	for name, q := range req {
		if q.IsZero() {
			continue
		}
		f, ok := free[name]
		if !ok {
			return 0
		}
		n = min(n, f.MilliValue()/q.MilliValue())
	}
	return max(n, 0)
}

// FuzzNodeGroups checks the model's invariants on random members: it
// counts every node once, stays within its bound, does not depend on the
// nodes' order, and never says more replicas fit than fit node by node.
func FuzzNodeGroups(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(3))
	f.Add(uint64(7), uint8(200), uint8(64))
	f.Fuzz(func(t *testing.T, seed uint64, nodes, max uint8) {
		r := rand.New(rand.NewPCG(seed, seed>>1))
		bound := int(max%64) + 1
		rooms := make([]corev1.ResourceList, int(nodes))
		for i := range rooms {
			// Few shapes, so that groups form, and some with a GPU.
			rooms[i] = corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(r.IntN(8))*500, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(int64(r.IntN(6))<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(int64(r.IntN(4)), resource.DecimalSI),
			}
			if r.IntN(3) == 0 {
				rooms[i]["nvidia.com/gpu"] = *resource.NewQuantity(int64(r.IntN(3)), resource.DecimalSI)
			}
		}
		groups := nodeGroups(rooms, bound)
		if len(groups) > bound {
			t.Fatalf("%d groups, bound %d", len(groups), bound)
		}
		var count int32
		for _, g := range groups {
			count += g.Count
		}
		if int(count) != len(rooms) {
			t.Fatalf("groups count %d nodes, there are %d", count, len(rooms))
		}
		shuffled := slices.Clone(rooms)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := nodeGroups(shuffled, bound); !sameGroups(groups, again) {
			t.Fatalf("the order of the nodes changed the model:\n%v\n%v", groups, again)
		}
		for _, req := range []corev1.ResourceList{rl("cpu", "500m"), rl("cpu", "1", "memory", "1Gi"), rl("memory", "3Gi"), rl("cpu", "250m", "nvidia.com/gpu", "1")} {
			var model, truth int64
			for _, g := range groups {
				model += int64(g.Count) * fitOn(g.Free, req)
			}
			for _, room := range rooms {
				truth += fitOn(room, req)
			}
			if model > truth {
				t.Fatalf("request %v: the model says %d fit, the nodes hold %d", req, model, truth)
			}
			if len(groups) < bound && model != truth {
				t.Fatalf("request %v: within the bound the model is exact, says %d, nodes hold %d", req, model, truth)
			}
		}
	})
}

// TestTakeUnbound: pods the member has created and not bound yet take
// room in the node model, each on the node with the most room that holds
// it, largest first; one no node holds takes nothing; the order the pods
// and the nodes come in does not change the model.
func TestTakeUnbound(t *testing.T) {
	cases := []struct {
		name    string
		rooms   []corev1.ResourceList
		pending []corev1.ResourceList
		want    []corev1.ResourceList
	}{
		{"nothing pending", []corev1.ResourceList{rl("cpu", "4", "pods", "10")}, nil, []corev1.ResourceList{rl("cpu", "4", "pods", "10")}},
		{"spread over the roomiest nodes", []corev1.ResourceList{rl("cpu", "4", "pods", "10"), rl("cpu", "2", "pods", "10")},
			[]corev1.ResourceList{rl("cpu", "1"), rl("cpu", "1"), rl("cpu", "1")},
			// the third ties on cpu and goes where more pods fit
			[]corev1.ResourceList{rl("cpu", "2", "pods", "8"), rl("cpu", "1", "pods", "9")}},
		{"the largest first: it still finds a node that holds it", []corev1.ResourceList{rl("cpu", "3", "pods", "10"), rl("cpu", "2", "pods", "10")},
			[]corev1.ResourceList{rl("cpu", "1"), rl("cpu", "1"), rl("cpu", "3")},
			[]corev1.ResourceList{rl("cpu", "0", "pods", "9"), rl("cpu", "0", "pods", "8")}},
		{"a pod no node holds takes nothing", []corev1.ResourceList{rl("cpu", "2", "pods", "10")},
			[]corev1.ResourceList{rl("cpu", "3"), rl("cpu", "1", "nvidia.com/gpu", "1")},
			[]corev1.ResourceList{rl("cpu", "2", "pods", "10")}},
		{"a node with no pods left holds none", []corev1.ResourceList{rl("cpu", "8", "pods", "0"), rl("cpu", "1", "pods", "5")},
			[]corev1.ResourceList{rl("cpu", "1")},
			[]corev1.ResourceList{rl("cpu", "8", "pods", "0"), rl("cpu", "0", "pods", "4")}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(5) {
				rooms := make([]corev1.ResourceList, len(tt.rooms))
				for i, r := range tt.rooms {
					rooms[i] = r.DeepCopy()
				}
				pending := slices.Clone(tt.pending)
				rnd := rand.New(rand.NewPCG(seed, 1))
				rnd.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
				rnd.Shuffle(len(rooms), func(i, j int) { rooms[i], rooms[j] = rooms[j], rooms[i] })
				takeUnbound(rooms, pending)
				if got, want := nodeGroups(rooms, 8), nodeGroups(tt.want, 8); !sameGroups(got, want) {
					t.Errorf("order %d: rooms %v, want %v", seed, rooms, tt.want)
				}
			}
		})
	}
}
