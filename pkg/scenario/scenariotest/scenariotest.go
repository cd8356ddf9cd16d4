// Package scenariotest finds the shared fleet scenarios for tests and
// benchmarks.
package scenariotest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shepherd-io/shepherd/pkg/scenario"
)

// Fleet files of the shared bench directory.
const (
	Fleet20   = "fleet-20c-200w.json"
	Fleet1000 = "fleet-1000c-5000w.json"
	Fleet5000 = "fleet-5000c-10000w.json"
)

// Now is the clock scenarios are loaded with in tests.
var Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchFile returns the path of a file in the shared bench directory,
// ../shared/bench next to the repository root, skipping the test when it
// is absent (the scenarios live outside the repository).
func BenchFile(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.mod above the working directory: cannot locate ../shared/bench")
		}
		dir = parent
	}
	path := filepath.Join(dir, "..", "shared", "bench", name)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("fleet scenario %s is not available (%v); it lives in ../shared/bench next to the repository", name, err)
	}
	return path
}

// Load loads a shared fleet scenario, skipping when it is absent.
func Load(tb testing.TB, name string) *scenario.Scenario {
	tb.Helper()
	s, err := scenario.Load(BenchFile(tb, name), Now)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
