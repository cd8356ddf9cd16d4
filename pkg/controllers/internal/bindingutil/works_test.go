package bindingutil

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

func TestBindingOf(t *testing.T) {
	long := make([]byte, 80)
	for i := range long {
		long[i] = 'a'
	}
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: string(long)}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: names.BindingLabels(ref), Annotations: map[string]string{workv1alpha1.AnnotationBinding: ref.String()}}}
	if got, ok := BindingOf(w); !ok || got != ref {
		t.Errorf("with annotation: %+v", got)
	}
	w.Annotations = nil
	w.Labels = map[string]string{workv1alpha1.LabelBindingKind: "ClusterResourceBinding", workv1alpha1.LabelBindingName: "crb"}
	if got, ok := BindingOf(w); !ok || got != (names.BindingRef{Kind: "ClusterResourceBinding", Name: "crb"}) {
		t.Errorf("labels only: %+v", got)
	}
	if _, ok := BindingOf(&workv1alpha1.Work{}); ok {
		t.Error("a Work without binding")
	}
}
