package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDefinesAPI: a CustomResourceDefinition defines an API; nothing else
// built in does, nor a kind no layer knows, and a customization of the
// CRD kind keeps it so.
func TestDefinesAPI(t *testing.T) {
	crd := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	apiService := schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	for _, tc := range []struct {
		name   string
		gvk    schema.GroupVersionKind
		custom *Custom
		want   bool
	}{
		{"a CustomResourceDefinition", crd, nil, true},
		{"a customized CustomResourceDefinition", crd, &Custom{Summed: []string{"x"}}, true},
		{"a Deployment", deploymentGVK, nil, false},
		{"an APIService (its objects live in another server)", apiService, nil, false},
		{"a custom resource", widget, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if tc.custom != nil {
				l.SetCustom(tc.gvk, tc.custom)
			}
			if got := l.DefinesAPI(tc.gvk.GroupKind()); got != tc.want {
				t.Errorf("DefinesAPI(%v) = %v, want %v", tc.gvk.GroupKind(), got, tc.want)
			}
		})
	}
}
