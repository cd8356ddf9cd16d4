package bindingutil

import (
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// BindingOf returns the binding a Work belongs to: the binding annotation
// when present (label values are shortened with a hash when a name is
// longer than 63 characters), else the binding labels.
func BindingOf(w *workv1alpha1.Work) (names.BindingRef, bool) {
	if ref, ok := names.ParseBindingRef(w.Annotations[workv1alpha1.AnnotationBinding]); ok {
		return ref, true
	}
	l := w.Labels
	ref := names.BindingRef{Kind: l[workv1alpha1.LabelBindingKind], Namespace: l[workv1alpha1.LabelBindingNamespace], Name: l[workv1alpha1.LabelBindingName]}
	return ref, ref.Kind != "" && ref.Name != ""
}
