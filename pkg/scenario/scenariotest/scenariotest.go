// Package scenariotest finds fleet scenarios for tests and benchmarks.
//
// The 20-cluster scenario ships in testdata, so the tests that use it run
// from a clone alone. The larger ones (1,000 and 5,000 clusters, a few MB
// each) are read from the directory named by $SHEPHERD_FLEETS_DIR; tests
// and benchmarks that need them skip when it is unset.
package scenariotest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scenario"
)

// Fleet scenario files.
const (
	Fleet20   = "fleet-20c-200w.json"
	Fleet1000 = "fleet-1000c-5000w.json"
	Fleet5000 = "fleet-5000c-10000w.json"
)

// EnvFleetsDir names the directory holding the larger fleet scenarios.
const EnvFleetsDir = "SHEPHERD_FLEETS_DIR"

// Now is the clock scenarios are loaded with in tests.
var Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchFile returns the path of a fleet scenario: from this package's
// testdata when it ships there, else from $SHEPHERD_FLEETS_DIR, skipping
// the test when it is in neither.
func BenchFile(tb testing.TB, name string) string {
	tb.Helper()
	_, self, _, _ := runtime.Caller(0)
	local := filepath.Join(filepath.Dir(self), "testdata", name)
	if _, err := os.Stat(local); err == nil {
		return local
	}
	dir := os.Getenv(EnvFleetsDir)
	if dir == "" {
		tb.Skipf("fleet scenario %s: set %s to the directory holding it", name, EnvFleetsDir)
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("fleet scenario %s is not in %s=%s: %v", name, EnvFleetsDir, dir, err)
	}
	return path
}

// Load loads a fleet scenario, skipping when it is absent. Its templates
// are read with the built-in kinds: tests have no hub to learn others from.
func Load(tb testing.TB, name string) *scenario.Scenario {
	tb.Helper()
	s, err := scenario.Load(BenchFile(tb, name), Now, interpreter.Builtin())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
