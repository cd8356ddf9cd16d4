package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSensitive: Secrets are sensitive built in, other built-in kinds are
// not, and a customization marks a kind sensitive, never unmarks one.
func TestSensitive(t *testing.T) {
	secret := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	credential := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Credential"}
	yes := true
	for _, tc := range []struct {
		name   string
		gvk    schema.GroupVersionKind
		custom *Custom // nil: no customization
		want   bool
	}{
		{"a Secret", secret, nil, true},
		{"a ConfigMap", configMap, nil, false},
		{"a Deployment", deploymentGVK, nil, false},
		{"a kind no layer knows", credential, nil, false},
		{"a customized kind marked sensitive", credential, &Custom{Sensitive: true}, true},
		{"a customized kind not marked", credential, &Custom{ObservesGeneration: &yes}, false},
		{"a built-in kind marked sensitive", configMap, &Custom{Sensitive: true}, true},
		{"a Secret whose customization does not mark it", secret, &Custom{Summed: []string{"x"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if tc.custom != nil {
				l.SetCustom(tc.gvk, tc.custom)
			}
			if got := l.Sensitive(tc.gvk.GroupKind()); got != tc.want {
				t.Errorf("Sensitive(%v) = %v, want %v", tc.gvk.GroupKind(), got, tc.want)
			}
			if tc.custom != nil {
				l.ClearCustom(tc.gvk)
				if got, builtIn := l.Sensitive(tc.gvk.GroupKind()), Builtin().Sensitive(tc.gvk.GroupKind()); got != builtIn {
					t.Errorf("customization cleared: Sensitive = %v, want the built-in %v", got, builtIn)
				}
			}
		})
	}
}
