package overrides

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// TestValueBounds: a value larger or deeper than an override value may
// be is refused by the operation, naming its size and the limit, before
// anything decodes it; values within the bounds apply.
func TestValueBounds(t *testing.T) {
	doc := []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{}}`)
	big := `"` + strings.Repeat("x", policyv1alpha1.MaxOverrideValueBytes) + `"`
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	ok := strings.Repeat("[", policyv1alpha1.MaxOverrideValueDepth) + strings.Repeat("]", policyv1alpha1.MaxOverrideValueDepth)
	quoted := `"` + strings.Repeat("[", 100) + `\"[` + `"`
	for _, tc := range []struct {
		name, value, want string
	}{
		{"a small value", `"v"`, ""},
		{"as deep as allowed", ok, ""},
		{"brackets inside a string do not nest", quoted, ""},
		{"too large", big, "the value is 65538 bytes of JSON, more than the 65536 an override value may hold"},
		{"nested 5,000 deep", deep, "the value nests 5000 levels deep, more than the 32 an override value may"},
	} {
		_, err := patchOne(doc, policyv1alpha1.OverriderOpAdd, "/data/k", apiextensionsv1.JSON{Raw: []byte(tc.value)})
		switch {
		case tc.want == "" && err != nil && strings.Contains(err.Error(), "an override value"):
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want %q, got %v", tc.name, tc.want, err)
		}
	}
}
