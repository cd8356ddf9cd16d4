package interpreter

import (
	"math"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzRayClusterComponents holds the built-in RayCluster rule to its
// invariants whatever the object: an error naming the workload, or a head
// of 1 pod then one component per worker group, in order, with unique,
// non-empty names and 0 replicas or more; a group whose bounds make sense
// (0 <= minReplicas <= maxReplicas, numOfHosts >= 1) runs between
// minReplicas and maxReplicas times numOfHosts pods. The answer is the
// same every time, and Replicas stays 0: the cluster is placed as one
// object, its components read, not added up.
func FuzzRayClusterComponents(f *testing.F) {
	f.Add(int64(3), int64(1), int64(10), int64(1), "small-group", "medium-group", uint8(0))
	f.Add(int64(12), int64(0), int64(10), int64(2), "a", "b", uint8(0))
	f.Add(int64(1), int64(5), int64(2), int64(1), "a", "b", uint8(0x0f))
	f.Add(int64(-3), int64(-5), int64(math.MaxInt32), int64(3), "a", "a", uint8(0))
	f.Add(int64(math.MaxInt64), int64(0), int64(math.MaxInt64), int64(math.MaxInt64), "", "ray-head", uint8(0xf0))
	f.Fuzz(func(t *testing.T, replicas, minReplicas, maxReplicas, hosts int64, name1, name2 string, unset uint8) {
		// group is a worker group; bit i of unset (shifted by the
		// group's index) leaves field i out.
		group := func(name string, shift uint) map[string]any {
			g := map[string]any{"groupName": name, "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "ray-worker"}}}}}
			for i, f := range []struct {
				field string
				v     int64
			}{{"replicas", replicas}, {"minReplicas", minReplicas}, {"maxReplicas", maxReplicas}, {"numOfHosts", hosts}} {
				if unset&(1<<(uint(i)+shift)) == 0 {
					g[f.field] = f.v
				}
			}
			return g
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster",
			"metadata": map[string]any{"name": "r", "namespace": "ns"},
			"spec": map[string]any{
				"headGroupSpec":    map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "ray-head"}}}}},
				"workerGroupSpecs": []any{group(name1, 0), group(name2, 4)},
			}}}
		in := New()
		cs, err := in.Components(obj)
		again, err2 := in.Components(obj)
		if !reflect.DeepEqual(cs, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("two answers: %v %v, then %v %v", cs, err, again, err2)
		}
		if n, req, rerr := in.Replicas(obj); n != 0 || req != nil || rerr != nil {
			t.Fatalf("Replicas = %d %v %v, want 0: a RayCluster is placed as one object", n, req, rerr)
		}
		if err != nil {
			if want := "RayCluster ns/r: components: the built-in rule for ray.io/v1 RayCluster: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
				t.Fatalf("error %q does not name the workload and the rule", err)
			}
			return
		}
		if len(cs) != 3 || cs[0].Name != rayHead || cs[0].Replicas != 1 || cs[1].Name != name1 || cs[2].Name != name2 {
			t.Fatalf("components %+v, want the head then the groups %q and %q", cs, name1, name2)
		}
		if err := checkComponents(cs); err != nil {
			t.Fatalf("an invalid answer: %v", err)
		}
		for i, c := range cs[1:] {
			shift := uint(4 * i)
			if unset&(0x0f<<shift) != 0 || minReplicas < 0 || minReplicas > maxReplicas || hosts < 1 || maxReplicas > math.MaxInt32 || hosts > math.MaxInt32 {
				continue
			}
			// Both within int32: the products cannot overflow.
			lo, hi := min(minReplicas*hosts, math.MaxInt32), min(maxReplicas*hosts, math.MaxInt32)
			if int64(c.Replicas) < lo || int64(c.Replicas) > hi {
				t.Fatalf("group %q: %d pods, want %d to %d", c.Name, c.Replicas, lo, hi)
			}
		}
	})
}
