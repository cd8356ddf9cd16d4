package framework

import (
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Component is one pod template of a workload made of several (a gang):
// its name, how many pods run it and what one of them needs.
type Component struct {
	Name     string
	Replicas int32
	// Request is what one pod of the component needs (Pods is ignored),
	// converted as Workload.Request is.
	Request Resources
}

// ComponentsFromSpec converts a binding's spec.components, in their order;
// nil when it has none.
func ComponentsFromSpec(cs []workv1alpha1.Component) []Component {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Component, len(cs))
	for i, c := range cs {
		out[i] = Component{Name: c.Name, Replicas: c.Replicas}
		if rr := c.ReplicaRequirements; rr != nil {
			out[i].Request = ResourcesFromList(rr.ResourceRequest)
		}
	}
	return out
}

// TargetComponents is what a target cluster of w holds of its components:
// every replica of each, in order, since a gang is placed whole; nil for a
// workload without components, whose targets carry none. Each call
// returns a slice of its own, so targets never share one.
func (w *Workload) TargetComponents() []workv1alpha1.TargetComponent {
	if len(w.Components) == 0 {
		return nil
	}
	out := make([]workv1alpha1.TargetComponent, len(w.Components))
	for i, c := range w.Components {
		out[i] = workv1alpha1.TargetComponent{Name: c.Name, Replicas: max(c.Replicas, 0)}
	}
	return out
}
