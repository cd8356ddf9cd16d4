package scheduling

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestMergeTargetsCarriesComponents: a gang's targets take the components
// the scheduler placed there, kept or new alike; a target of any other
// workload stays without them.
func TestMergeTargetsCarriesComponents(t *testing.T) {
	parts := []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 6}}
	current := []workv1alpha1.TargetCluster{{Name: "a", State: workv1alpha1.TargetBound,
		Components: []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}}}
	got := MergeTargets(current, []workv1alpha1.TargetCluster{{Name: "a", Components: parts}, {Name: "b", Components: parts}}, false)
	want := []workv1alpha1.TargetCluster{
		{Name: "a", State: workv1alpha1.TargetBound, Components: parts},
		{Name: "b", State: workv1alpha1.TargetScheduled, Components: parts},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	plain := MergeTargets(nil, []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3}}, false)
	if plain[0].Components != nil {
		t.Errorf("a plain target got components: %+v", plain[0])
	}
}

// TestSchedulingHashOfComponents: a gang whose parts change, or whose
// targets' parts do, is placed again; the hash of a binding without
// components is the one it had before components existed, so no other
// binding is scheduled again for them.
func TestSchedulingHashOfComponents(t *testing.T) {
	gang := func(workers int32) *workv1alpha1.BindingSpec {
		return &workv1alpha1.BindingSpec{
			Components: []workv1alpha1.Component{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: workers}},
			Clusters: []workv1alpha1.TargetCluster{{Name: "a",
				Components: []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}}},
		}
	}
	if SchedulingHash(gang(4)) == SchedulingHash(gang(6)) {
		t.Error("a worker group scaled from 4 to 6 must change the hash")
	}
	moved := gang(4)
	moved.Clusters[0].Components[1].Replicas = 2
	if SchedulingHash(gang(4)) == SchedulingHash(moved) {
		t.Error("a target's components changing must change the hash")
	}

	// The hash as it was computed before components: the same fields,
	// without them.
	type oldTarget struct {
		Name     string `json:"name"`
		Replicas int32  `json:"replicas"`
	}
	type oldInput struct {
		Replicas  int32                                `json:"replicas"`
		Placement *policyv1alpha1.Placement            `json:"placement,omitempty"`
		Targets   []oldTarget                          `json:"targets,omitempty"`
		Groups    *workv1alpha1.WorkloadAffinityGroups `json:"groups,omitempty"`
	}
	plain := &workv1alpha1.BindingSpec{Replicas: 3, Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "b"}}},
		Clusters: []workv1alpha1.TargetCluster{{Name: "b", Replicas: 1}, {Name: "a", Replicas: 2, State: workv1alpha1.TargetBound}}}
	in := oldInput{Replicas: plain.Replicas, Placement: plain.Placement}
	for _, tc := range plain.Clusters {
		in.Targets = append(in.Targets, oldTarget{Name: tc.Name, Replicas: tc.Replicas})
	}
	slices.SortFunc(in.Targets, func(a, b oldTarget) int { return cmp.Compare(a.Name, b.Name) })
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got, want := SchedulingHash(plain), hex.EncodeToString(sum[:16]); got != want {
		t.Errorf("the hash of a binding without components changed: %s, was %s", got, want)
	}
}
