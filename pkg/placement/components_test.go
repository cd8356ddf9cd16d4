package placement

import (
	"strings"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func divideIndependent() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}}
}

// divisibleGang is a head and a divisible worker group, both with their
// replicasPath.
func divisibleGang() []workv1alpha1.Component {
	return []workv1alpha1.Component{
		{Name: "head", Replicas: 1, ReplicasPath: "/spec/head/replicas"},
		{Name: "workers", Replicas: 4, Divisible: true, ReplicasPath: "/spec/workerGroups/0/replicas"},
	}
}

// A workload divides only when the policy asks, a component is divisible
// and every component has a replicasPath; when the policy asks and it
// cannot, the reason names what is missing.
func TestDividesComponents(t *testing.T) {
	noPath := divisibleGang()
	noPath[0].ReplicasPath = ""
	noneDivisible := divisibleGang()
	noneDivisible[1].Divisible = false
	for _, tc := range []struct {
		name      string
		placement *policyv1alpha1.Placement
		cs        []workv1alpha1.Component
		divides   bool
		why       string
	}{
		{"asked, divisible, every path", divideIndependent(), divisibleGang(), true, ""},
		{"no placement", nil, divisibleGang(), false, ""},
		{"no components field", &policyv1alpha1.Placement{}, divisibleGang(), false, ""},
		{"Whole", &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionWhole}}, divisibleGang(), false, ""},
		{"a workload of no components", divideIndependent(), nil, false, ""},
		{"no component divisible", divideIndependent(), noneDivisible, false, "no component is divisible"},
		{"a component without replicasPath", divideIndependent(), noPath, false, `component "head" has no replicasPath`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			divides, why := DividesComponents(tc.placement, tc.cs)
			if divides != tc.divides || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("DividesComponents = %v, %q; want %v, %q", divides, why, tc.divides, tc.why)
			}
		})
	}
}
