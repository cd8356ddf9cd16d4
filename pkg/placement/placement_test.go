package placement

import (
	"testing"
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Describe names each kind of placement as the docs do.
func TestDescribe(t *testing.T) {
	divided := func(pref policyv1alpha1.ReplicaDivisionPreference, w *policyv1alpha1.ClusterPreferences) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref, WeightPreference: w}}
	}
	for _, tc := range []struct {
		name     string
		p        *policyv1alpha1.Placement
		replicas int32
		want     string
	}{
		{"no placement", nil, 4, "Duplicated"},
		{"no replicaScheduling", &policyv1alpha1.Placement{}, 4, "Duplicated"},
		{"Duplicated", &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}, 4, "Duplicated"},
		// an empty replicaSchedulingType means Divided, the API's default
		{"empty type", &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}}, 4, "Divided (equal weights)"},
		{"a kind without replicas", divided("", nil), 0, "Duplicated"},
		{"Aggregated", divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, nil), 4, "Divided (Aggregated)"},
		{"dynamic", divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}), 4, "Divided (dynamic weights)"},
		{"static", divided("", &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{{Weight: 1}}}), 4, "Divided (static weights)"},
		{"equal", divided("", nil), 4, "Divided (equal weights)"},
	} {
		if got := Describe(tc.p, tc.replicas); got != tc.want {
			t.Errorf("%s: Describe = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPlacesEverywhere(t *testing.T) {
	two := int32(2)
	divided := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	for _, tc := range []struct {
		name string
		spec workv1alpha1.BindingSpec
		want bool
	}{
		{"no placement", workv1alpha1.BindingSpec{Replicas: 3}, true},
		{"divided replicas", workv1alpha1.BindingSpec{Replicas: 3, Placement: divided}, false},
		{"divided, a kind without replicas", workv1alpha1.BindingSpec{Placement: divided}, true},
		{"bounded by maxGroups", workv1alpha1.BindingSpec{Placement: &policyv1alpha1.Placement{
			SpreadConstraints: []policyv1alpha1.SpreadConstraint{{MaxGroups: &two}}}}, false},
		{"a gang placed whole", workv1alpha1.BindingSpec{Placement: &policyv1alpha1.Placement{}, Components: divisibleGang()}, true},
		{"a gang divided", workv1alpha1.BindingSpec{Placement: divideIndependent(), Components: divisibleGang()}, false},
	} {
		if got := PlacesEverywhere(&tc.spec); got != tc.want {
			t.Errorf("%s: PlacesEverywhere = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOverflows(t *testing.T) {
	divided := func(terms ...policyv1alpha1.ClusterAffinityTerm) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ClusterAffinities: terms,
			ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	}
	overflow := policyv1alpha1.ClusterAffinityTerm{AffinityName: "burst", OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{}}}
	plain := policyv1alpha1.ClusterAffinityTerm{AffinityName: "home"}
	for _, tc := range []struct {
		name     string
		spec     workv1alpha1.BindingSpec
		observed string
		want     bool
	}{
		{"no placement", workv1alpha1.BindingSpec{Replicas: 3}, "", false},
		{"first term overflows", workv1alpha1.BindingSpec{Replicas: 3, Placement: divided(overflow, plain)}, "", true},
		{"observed term does not", workv1alpha1.BindingSpec{Replicas: 3, Placement: divided(overflow, plain)}, "home", false},
		{"no replicas", workv1alpha1.BindingSpec{Placement: divided(overflow)}, "", false},
		{"observed term unknown", workv1alpha1.BindingSpec{Replicas: 3, Placement: divided(overflow)}, "gone", false},
	} {
		if got := Overflows(&tc.spec, &workv1alpha1.BindingStatus{ObservedAffinityName: tc.observed}); got != tc.want {
			t.Errorf("%s: Overflows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBlockWindow(t *testing.T) {
	zero, ten := int32(0), int32(10)
	for _, tc := range []struct {
		name string
		f    *policyv1alpha1.FailoverBehavior
		want time.Duration
	}{
		{"nothing said", nil, time.Duration(policyv1alpha1.DefaultBlockPredecessorSeconds) * time.Second},
		{"no application failover", &policyv1alpha1.FailoverBehavior{}, time.Duration(policyv1alpha1.DefaultBlockPredecessorSeconds) * time.Second},
		{"ten seconds", &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: &ten}}, 10 * time.Second},
		{"until cleared", &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: &zero}}, 0},
	} {
		if got := BlockWindow(tc.f); got != tc.want {
			t.Errorf("%s: BlockWindow = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStaticWeights(t *testing.T) {
	list := []policyv1alpha1.StaticClusterWeight{{Weight: 1}}
	weighted := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: list}}}
	if got := StaticWeights(weighted); len(got) != 1 {
		t.Errorf("static weights: %v", got)
	}
	if got := StaticWeights(nil); got != nil {
		t.Errorf("nil placement: %v", got)
	}
	aggregated := weighted.DeepCopy()
	aggregated.ReplicaScheduling.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceAggregated
	if got := StaticWeights(aggregated); got != nil {
		t.Errorf("aggregated: %v", got)
	}
	if !IsDuplicated(nil) || IsDuplicated(weighted) {
		t.Error("IsDuplicated")
	}
}
