package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// TestOnOverrideChange: listeners hear of every override set or cleared,
// and by then Lookup already returns the new interpreter (they re-evaluate
// health with it).
func TestOnOverrideChange(t *testing.T) {
	r := Default()
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	var heard []policyv1alpha1.ResourceHealth
	r.OnOverrideChange(func(got schema.GroupVersionKind) {
		if got != gvk {
			t.Errorf("heard of %v, want %v", got, gvk)
		}
		heard = append(heard, r.Interpret(obj).Health)
	})
	r.SetOverride(gvk, InterpreterFunc(func(*unstructured.Unstructured) Result { return unhealthy("flag") }))
	r.ClearOverride(gvk)
	want := []policyv1alpha1.ResourceHealth{policyv1alpha1.ResourceUnhealthy, policyv1alpha1.ResourceUnknown}
	if len(heard) != 2 || heard[0] != want[0] || heard[1] != want[1] {
		t.Errorf("listeners saw %v, want %v", heard, want)
	}
}
