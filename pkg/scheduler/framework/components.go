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
	// Divisible: the component's replicas may be divided over clusters,
	// apart from the others, when the workload divides
	// (Workload.DivideComponents).
	Divisible bool
}

// ComponentsFromSpec converts a binding's spec.components, in their order;
// nil when it has none.
func ComponentsFromSpec(cs []workv1alpha1.Component) []Component {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Component, len(cs))
	for i, c := range cs {
		out[i] = Component{Name: c.Name, Replicas: c.Replicas, Divisible: c.Divisible}
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

// HeldComponents are the replicas of each component w runs on the cluster
// named name now (an active target's components); nil when it runs none
// there. A target without components was placed before its components
// were known, as one object: it runs the whole workload. Those replicas
// hold room the cluster reports as used, so only what a component gains
// there takes room. A gang's targets are few, so a scan is enough.
func (w *Workload) HeldComponents(name string) map[string]int32 {
	for _, t := range w.Previous {
		if t.Name != name || t.State == workv1alpha1.TargetUnscheduled {
			continue
		}
		out := make(map[string]int32, len(w.Components))
		if len(t.Components) == 0 {
			for _, c := range w.Components {
				out[c.Name] = c.Replicas
			}
		}
		for _, c := range t.Components {
			out[c.Name] = c.Replicas
		}
		return out
	}
	return nil
}
