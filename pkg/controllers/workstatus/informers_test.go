package workstatus

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// TestChangedFromConfigMapData: a ConfigMap has neither status nor
// generation; an edit of its data in the member must still re-evaluate
// its health (a HealthInterpreter may read data).
func TestChangedFromConfigMapData(t *testing.T) {
	cm := func(rv, healthy string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"name": "flags", "namespace": "ns", "resourceVersion": rv,
				"annotations": map[string]any{workv1alpha1.AnnotationWork: "shepherd-es-member1/flags"},
			},
			"data": map[string]any{"healthy": healthy},
		}}
		return u
	}
	var got []types.NamespacedName
	mi := &memberInformers{notify: func(k types.NamespacedName) { got = append(got, k) }}

	mi.changedFrom(cm("1", "true"), cm("2", "true"))
	if len(got) != 0 {
		t.Fatalf("an update changing only the resourceVersion notified: %v", got)
	}
	mi.changedFrom(cm("2", "true"), cm("3", "false"))
	if want := []types.NamespacedName{{Namespace: "shepherd-es-member1", Name: "flags"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("data edit: notified %v, want %v", got, want)
	}
}

// TestWorksOfKind: a HealthInterpreter change re-evaluates the Works with
// a collected manifest of its kind, and only those.
func TestWorksOfKind(t *testing.T) {
	ns := names.ExecutionNamespace("member1")
	work := func(namespace, name string, ids ...workv1alpha1.ResourceIdentifier) workv1alpha1.Work {
		w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		for _, id := range ids {
			w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, workv1alpha1.ManifestStatus{Identifier: id})
		}
		return w
	}
	cm := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "flags"}
	deploy := workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web"}
	works := []workv1alpha1.Work{
		work(ns, "flags", cm),
		work(ns, "web", deploy),
		work(ns, "both", deploy, cm),
		work(ns, "not-collected"),
		work("default", "elsewhere", cm),
	}
	got := worksOfKind(works, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	want := []types.NamespacedName{{Namespace: ns, Name: "flags"}, {Namespace: ns, Name: "both"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
