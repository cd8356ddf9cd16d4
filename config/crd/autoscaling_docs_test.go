package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoscalingDocsYAMLIsValid: every FederatedHPA and CronFederatedHPA
// that docs/autoscaling.md shows passes the autoscaling CRDs' validation.
// The page's other YAML is either a built-in kind the examples act on (a
// Deployment, a Service) or a fragment without apiVersion (a ConfigMap's
// data); anything else is a kind this test does not know, and fails it.
func TestAutoscalingDocsYAMLIsValid(t *testing.T) {
	validators := map[string]*validator{
		"FederatedHPA":     loadValidator(t, "federatedhpas.autoscaling.shepherd.io"),
		"CronFederatedHPA": loadValidator(t, "cronfederatedhpas.autoscaling.shepherd.io"),
	}
	builtIn := map[string]bool{"Deployment": true, "Service": true}
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "autoscaling.md"))
	if err != nil {
		t.Fatal(err)
	}
	validated := map[string]int{}
	for i, b := range strings.Split(string(data), "```yaml\n")[1:] {
		block, _, _ := strings.Cut(b, "```")
		for j, doc := range strings.Split(block, "\n---\n") {
			kind, apiVersion := topLevel(doc, "kind"), topLevel(doc, "apiVersion")
			switch {
			case validators[kind] != nil:
				wantErrors(t, validators[kind].validate(t, doc), nil)
				validated[kind]++
			case builtIn[kind]:
			case kind == "" && apiVersion == "":
				// A fragment (a ConfigMap's data, say): nothing to validate.
			default:
				t.Errorf("block %d, document %d: kind %q (apiVersion %q) is neither an autoscaling kind nor a built-in one this test knows", i, j, kind, apiVersion)
			}
		}
	}
	for kind := range validators {
		if validated[kind] == 0 {
			t.Errorf("docs/autoscaling.md shows no %s", kind)
		}
	}
}

// topLevel is the value of a top-level "key: value" line of a YAML
// document, or "" without one.
func topLevel(doc, key string) string {
	for line := range strings.SplitSeq(doc, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
