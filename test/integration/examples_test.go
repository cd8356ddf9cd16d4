package integration

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestExamplesApply applies every YAML file under examples/ (and docs'
// examples) to the hub: the documentation's YAML must be valid.
func TestExamplesApply(t *testing.T) {
	files, err := testenv.YAMLFiles(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found only %d example files; is the examples directory missing?", len(files))
	}
	for _, f := range files {
		t.Run(filepath.ToSlash(f), func(t *testing.T) {
			objs, err := hub.ApplyFile(context.Background(), f)
			if err != nil {
				t.Fatalf("applying %s: %v", f, err)
			}
			if len(objs) == 0 {
				t.Fatalf("%s holds no object", f)
			}
		})
	}
}
