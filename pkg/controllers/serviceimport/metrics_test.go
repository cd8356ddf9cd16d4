package serviceimport

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestObserve: a Service's series follow its import: serving clusters,
// a conflict while there is one, and nothing once it is not imported.
func TestObserve(t *testing.T) {
	observe("shop", "web", 2, "PortConflict")
	if got := testutil.ToFloat64(imported.WithLabelValues("shop", "web")); got != 2 {
		t.Errorf("exporting clusters %v, want 2", got)
	}
	if got := testutil.ToFloat64(conflicts.WithLabelValues("shop", "web", "PortConflict")); got != 1 {
		t.Errorf("conflict %v, want 1", got)
	}
	observe("shop", "web", 1, "")
	if n := testutil.CollectAndCount(conflicts); n != 0 {
		t.Errorf("%d conflict series after the conflict ended, want 0", n)
	}
	observe("shop", "web", 0, "")
	if n := testutil.CollectAndCount(imported); n != 0 {
		t.Errorf("%d import series after the import ended, want 0", n)
	}
}
