// Package bindingutil holds what the detector, the scheduling controller and
// the binding controller share about the two binding kinds: a descriptor
// that lets one generic reconciler serve ResourceBindings and
// ClusterResourceBindings, target-state helpers, how a template's
// replicas are read and divided, and how a cluster is evicted from a
// placement (failover and the descheduler).
package bindingutil

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Kind describes one binding kind to a generic controller. Go cannot
// allocate a T or a list of T from a type parameter alone, so the
// descriptor carries the constructors.
type Kind[T workv1alpha1.BindingObject] struct {
	// Name is the kind as written in LabelBindingKind.
	Name string
	// New returns an empty binding.
	New func() T
	// NewList returns an empty list of bindings.
	NewList func() client.ObjectList
	// Items returns pointers to a list's bindings, in list order.
	Items func(client.ObjectList) []T
}

// Ref identifies b for labels and annotations.
func (k Kind[T]) Ref(b T) names.BindingRef {
	return names.BindingRef{Kind: k.Name, Namespace: b.GetNamespace(), Name: b.GetName()}
}

// ResourceBindings describes ResourceBinding.
func ResourceBindings() Kind[*workv1alpha1.ResourceBinding] {
	return Kind[*workv1alpha1.ResourceBinding]{
		Name:    workv1alpha1.KindResourceBinding,
		New:     func() *workv1alpha1.ResourceBinding { return &workv1alpha1.ResourceBinding{} },
		NewList: func() client.ObjectList { return &workv1alpha1.ResourceBindingList{} },
		Items: func(l client.ObjectList) []*workv1alpha1.ResourceBinding {
			return Pointers(l.(*workv1alpha1.ResourceBindingList).Items)
		},
	}
}

// ClusterResourceBindings describes ClusterResourceBinding.
func ClusterResourceBindings() Kind[*workv1alpha1.ClusterResourceBinding] {
	return Kind[*workv1alpha1.ClusterResourceBinding]{
		Name:    workv1alpha1.KindClusterResourceBinding,
		New:     func() *workv1alpha1.ClusterResourceBinding { return &workv1alpha1.ClusterResourceBinding{} },
		NewList: func() client.ObjectList { return &workv1alpha1.ClusterResourceBindingList{} },
		Items: func(l client.ObjectList) []*workv1alpha1.ClusterResourceBinding {
			return Pointers(l.(*workv1alpha1.ClusterResourceBindingList).Items)
		},
	}
}

// Pointers returns pointers to the elements of items, in order, such as
// the items of a typed list seen through their interface.
func Pointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// NewForTemplate returns an empty binding of the kind a template gets: a
// ResourceBinding (in the template's namespace) for a namespaced template,
// a ClusterResourceBinding for a cluster-scoped one.
func NewForTemplate(namespaced bool) workv1alpha1.BindingObject {
	if namespaced {
		return &workv1alpha1.ResourceBinding{}
	}
	return &workv1alpha1.ClusterResourceBinding{}
}

// KindOf returns b's kind name.
func KindOf(b workv1alpha1.BindingObject) string {
	if _, ok := b.(*workv1alpha1.ClusterResourceBinding); ok {
		return workv1alpha1.KindClusterResourceBinding
	}
	return workv1alpha1.KindResourceBinding
}
