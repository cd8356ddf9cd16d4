package interpreter

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
)

// podsRule says how to find the pods a kind's controller or operator runs
// for one object, in the object's namespace: by the object's own label
// selector (a Deployment), or by the label its operator writes on every
// pod it runs for the object, naming the object (a RayCluster's pods are
// labelled ray.io/cluster=<its name>). The rules are data, in the tables
// of the built-in kinds (kinds.go, components.go).
type podsRule struct {
	// selector is the field holding the label selector of the pods
	// (spec.selector); nil for a rule by label.
	selector []string
	// label is the label naming the object the pods run for. Its value is
	// the object's name, or the string at value when set: a RayJob's pods
	// are those of the RayCluster its status names.
	label string
	value []string
	// with are further labels every one of the pods carries, each with
	// the values it may have: they tell apart the pods of kinds whose
	// operators label them alike (a TFJob's and a PyTorchJob's of one
	// name).
	with []podLabel
	// unless is a field that, set and not empty, says the object runs no
	// pods of its own (a RayJob that submits to an existing RayCluster).
	unless []string
}

// podLabel is a label the pods carry and the values it may have.
type podLabel struct {
	key    string
	values []string
}

// byName are the pods labelled label=<the object's name>, and with each
// label of with.
func byName(label string, with ...podLabel) *podsRule {
	return &podsRule{label: label, with: with}
}

// PodSelector returns the selector of the pods a workload runs, by its
// kind's rule (kinds.go): spec.selector for Deployments, ReplicaSets and
// StatefulSets, the label its operator names the workload by for the
// kinds of several pod templates (a RayCluster's ray.io/cluster). False
// for a kind without a rule, and when the rule finds nothing to select
// by: a missing, empty or malformed selector (an empty one would select
// every pod of the namespace), a label value that is missing, empty or
// no label value, or the rule's unless field set.
func (l *Layered) PodSelector(obj *unstructured.Unstructured) (labels.Selector, bool) {
	if obj == nil {
		return nil, false
	}
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k == nil || k.pods == nil {
		return nil, false
	}
	return k.pods.selectorOf(obj)
}

// selectorOf applies the rule to obj.
func (r *podsRule) selectorOf(obj *unstructured.Unstructured) (labels.Selector, bool) {
	if r.unless != nil {
		if v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, r.unless...); found && !empty(v) {
			return nil, false
		}
	}
	if r.selector != nil {
		return specSelector(obj, r.selector)
	}
	value := obj.GetName()
	if r.value != nil {
		s, found, err := unstructured.NestedString(obj.Object, r.value...)
		if err != nil || !found {
			return nil, false
		}
		value = s
	}
	if r.label == "" || value == "" {
		return nil, false
	}
	named, err := labels.NewRequirement(r.label, selection.Equals, []string{value})
	if err != nil {
		return nil, false // not a label value: no pod can carry it
	}
	reqs := []labels.Requirement{*named}
	for _, w := range r.with {
		op := selection.In
		if len(w.values) == 1 {
			op = selection.Equals
		}
		req, err := labels.NewRequirement(w.key, op, w.values)
		if err != nil {
			return nil, false
		}
		reqs = append(reqs, *req)
	}
	return labels.NewSelector().Add(reqs...), true
}

// specSelector is the label selector at field of obj.
func specSelector(obj *unstructured.Unstructured, field []string) (labels.Selector, bool) {
	raw, found, err := unstructured.NestedMap(obj.Object, field...)
	if err != nil || !found {
		return nil, false
	}
	ls := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, ls); err != nil {
		return nil, false
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		return nil, false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, false
	}
	return sel, true
}

// empty says whether v, a field's value, holds nothing: null, "", or an
// empty object or list.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
