package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestExamplesApply applies every YAML file under examples/ (and docs'
// examples) to the hub: the documentation's YAML must be valid. A file
// named *-refused.yaml shows an object the API refuses: applying it must
// fail with the message of its "# refused with:" comment.
func TestExamplesApply(t *testing.T) {
	suite.Hub(t)
	files, err := testenv.YAMLFiles(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d example files; is the examples directory missing?", len(files))
	}
	for _, f := range files {
		t.Run(filepath.ToSlash(f), func(t *testing.T) {
			if strings.HasSuffix(f, "-refused.yaml") {
				want := refusedWith(t, f)
				_, err := hub.ApplyFile(context.Background(), f)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("applying %s: want an error containing %q, got %v", f, want, err)
				}
				return
			}
			// A file may use a kind an earlier file's CRD defines, which
			// the API server serves once the CRD is established.
			var objs []*unstructured.Unstructured
			var err error
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if objs, err = hub.ApplyFile(context.Background(), f); !meta.IsNoMatchError(err) || time.Now().After(deadline) {
					break
				}
			}
			if err != nil {
				t.Fatalf("applying %s: %v", f, err)
			}
			if len(objs) == 0 {
				t.Fatalf("%s holds no object", f)
			}
		})
	}
}

// refusedWith returns the text of the file's "# refused with:" comment.
func refusedWith(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if want, ok := strings.CutPrefix(line, "# refused with: "); ok {
			return strings.TrimSpace(want)
		}
	}
	t.Fatalf("%s has no \"# refused with:\" comment", file)
	return ""
}
