package placement

import (
	"fmt"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// AsksToDivideComponents reports whether p asks for a workload's
// divisible components to be divided over clusters
// (components.division: DivideIndependent).
func AsksToDivideComponents(p *policyv1alpha1.Placement) bool {
	return p != nil && p.Components != nil && p.Components.Division == policyv1alpha1.ComponentDivisionDivideIndependent
}

// DividesComponents reports whether a workload of the components cs,
// placed by p, has its divisible components divided over clusters: p asks
// for it (AsksToDivideComponents), at least one component is divisible,
// and every component has a replicasPath, since a cluster's copy must set
// each component it does not run, whichever it is, to 0 replicas.
// Otherwise the workload is placed whole, and why says why when p asked
// for division of a workload made of components ("" when it did not, or
// for a workload of no components, which has nothing to divide). The
// scheduler, the binding controller, the descheduler and `shepherd plan`
// all ask it.
func DividesComponents(p *policyv1alpha1.Placement, cs []workv1alpha1.Component) (divides bool, why string) {
	if !AsksToDivideComponents(p) || len(cs) == 0 {
		return false, ""
	}
	divisible := false
	for _, c := range cs {
		divisible = divisible || c.Divisible
	}
	if !divisible {
		return false, "no component is divisible: the kind's components rule marks none divisible (divisible: true)"
	}
	for _, c := range cs {
		if c.ReplicasPath == "" {
			return false, fmt.Sprintf("component %q has no replicasPath: each cluster's copy sets the components it does not run to 0 replicas, so the kind's components rule must give every component's replicasPath", c.Name)
		}
	}
	return true, ""
}
