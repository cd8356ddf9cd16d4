package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoscalingDocsYAMLIsValid: every YAML block of docs/autoscaling.md
// passes the autoscaling CRDs' validation.
func TestAutoscalingDocsYAMLIsValid(t *testing.T) {
	validators := map[string]*validator{
		"FederatedHPA":     loadValidator(t, "federatedhpas.autoscaling.shepherd.io"),
		"CronFederatedHPA": loadValidator(t, "cronfederatedhpas.autoscaling.shepherd.io"),
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "autoscaling.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("found %d YAML blocks", len(blocks))
	}
	for i, b := range blocks {
		doc, _, _ := strings.Cut(b, "```")
		var kind string
		for line := range strings.SplitSeq(doc, "\n") {
			if k, ok := strings.CutPrefix(line, "kind: "); ok {
				kind = strings.TrimSpace(k)
			}
		}
		v := validators[kind]
		if v == nil {
			t.Fatalf("block %d: kind %q", i, kind)
		}
		wantErrors(t, v.validateTyped(t, doc), nil)
	}
}
