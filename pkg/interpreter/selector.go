package interpreter

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// selectsPods are the kinds whose spec.selector selects the pods their
// replicas run, in the object's namespace.
var selectsPods = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
}

// PodSelector returns the selector of the pods a workload's replicas run
// (spec.selector of Deployments, ReplicaSets and StatefulSets), or false
// for other kinds and for a missing, empty or malformed selector (an empty
// one would select every pod of the namespace).
func (l *Layered) PodSelector(obj *unstructured.Unstructured) (labels.Selector, bool) {
	if obj == nil || !selectsPods[obj.GroupVersionKind().GroupKind()] {
		return nil, false
	}
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
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
