package framework

import (
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// A binding's workload divides its components as pkg/placement says, with
// the reason when its placement asked and it cannot, and keeps the head
// cluster it was divided with.
func TestWorkloadFromBindingDivision(t *testing.T) {
	divide := &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}}
	components := []workv1alpha1.Component{
		{Name: "head", Replicas: 1, ReplicasPath: "/spec/head/replicas"},
		{Name: "workers", Replicas: 4, Divisible: true, ReplicasPath: "/spec/workers/replicas"},
	}
	noPath := []workv1alpha1.Component{components[0], {Name: "workers", Replicas: 4, Divisible: true}}
	for _, tc := range []struct {
		name       string
		spec       workv1alpha1.BindingSpec
		divides    bool
		notDivided string
		head       string
	}{
		{"divided", workv1alpha1.BindingSpec{Placement: divide, Components: components,
			DividedComponents: &workv1alpha1.DividedComponents{HeadCluster: "m2"}}, true, "", "m2"},
		{"asked, cannot", workv1alpha1.BindingSpec{Placement: divide, Components: noPath}, false, `component "workers" has no replicasPath`, ""},
		{"not asked", workv1alpha1.BindingSpec{Components: components}, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := WorkloadFromBinding(&workv1alpha1.ResourceBinding{Spec: tc.spec}, time.Time{})
			if w.DivideComponents != tc.divides || (w.NotDivided == "") != (tc.notDivided == "") || w.PreviousHead != tc.head {
				t.Errorf("divides %v (%q), head %q; want %v (%q), %q", w.DivideComponents, w.NotDivided, w.PreviousHead, tc.divides, tc.notDivided, tc.head)
			}
			if len(tc.notDivided) > 0 && !strings.Contains(w.NotDivided, tc.notDivided) {
				t.Errorf("reason %q lacks %q", w.NotDivided, tc.notDivided)
			}
			if w.Components[1].Divisible != true || w.Components[0].Divisible {
				t.Errorf("components %+v: divisible not carried", w.Components)
			}
		})
	}
}
