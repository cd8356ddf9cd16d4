package failover

import (
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// A NoExecute taint never evicts a CustomResourceDefinition: its eviction
// would delete the member's objects of that API, whoever made them.
func TestTaintEvictable(t *testing.T) {
	in := interpreter.New()
	for _, tc := range []struct {
		name string
		res  workv1alpha1.ObjectReference
		want bool
	}{
		{"a Deployment", workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, true},
		{"a ConfigMap", workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg"}, true},
		{"a custom resource", workv1alpha1.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}, true},
		{"a CustomResourceDefinition", workv1alpha1.ObjectReference{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, false},
		{"a CustomResourceDefinition of an older version", workv1alpha1.ObjectReference{APIVersion: "apiextensions.k8s.io/v1beta1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}, false},
		{"an apiVersion that does not parse", workv1alpha1.ObjectReference{APIVersion: "a/b/c", Kind: "CustomResourceDefinition"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := taintEvictable(in, tc.res); got != tc.want {
				t.Errorf("taintEvictable(%s %s) = %v, want %v", tc.res.APIVersion, tc.res.Kind, got, tc.want)
			}
		})
	}
}
