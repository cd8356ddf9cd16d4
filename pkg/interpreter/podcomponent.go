package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// componentLabel is a label an operator writes on each pod it runs for a
// workload of several pod templates, naming the component the pod runs:
// its value is the component's name, or the name names maps it to (a Ray
// head pod's ray.io/node-type=head is the component "ray-head"); a value
// names does not hold says nothing, and the next label is read.
type componentLabel struct {
	key   string
	names map[string]string
}

// componentLabels are the labels naming a pod's component, read in order:
// the first that names one wins. The rules are data, in the table of the
// built-in kinds of several pod templates (components.go).
type componentLabels []componentLabel

// named is the rule of a kind whose operator labels each pod key=<its
// component's name>.
func named(key string) componentLabels { return componentLabels{{key: key}} }

// of names the component a pod labelled podLabels runs; "" when no label
// of the rule names one.
func (r componentLabels) of(podLabels map[string]string) string {
	for _, l := range r {
		v, ok := podLabels[l.key]
		if !ok || v == "" {
			continue
		}
		if l.names == nil {
			return v
		}
		if name, ok := l.names[v]; ok {
			return name
		}
	}
	return ""
}

// PodComponent names, from a pod's labels, the component of its workload
// the pod runs; "" for none of the workload's components.
type PodComponent func(podLabels map[string]string) string

// PodComponents returns the names of a workload's components, in their
// order (Components), and which of them each of its pods runs, by the
// labels its kind's operator writes on the pod (componentKinds): a
// RayCluster's head pod is "ray-head", a worker pod its ray.io/group. A
// pod whose labels name no component, or one the workload does not have
// (a worker group since removed, or components a customization names
// otherwise), is of none: "". False for a kind without such labels and
// for a workload whose components cannot be read.
func (l *Layered) PodComponents(obj *unstructured.Unstructured) ([]string, PodComponent, bool) {
	if obj == nil {
		return nil, nil, false
	}
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k == nil || k.podComponent == nil {
		return nil, nil, false
	}
	cs, err := l.Components(obj)
	if err != nil || len(cs) == 0 {
		return nil, nil, false
	}
	names := make([]string, len(cs))
	known := make(map[string]bool, len(cs))
	for i, c := range cs {
		names[i] = c.Name
		known[c.Name] = true
	}
	rule := k.podComponent
	return names, func(podLabels map[string]string) string {
		if name := rule.of(podLabels); known[name] {
			return name
		}
		return ""
	}, true
}
