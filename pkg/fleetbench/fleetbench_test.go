package fleetbench

import (
	"context"
	"strings"
	"testing"
)

// TestRunSmallFleet runs the benchmark end to end on a small fleet: every
// binding must get scheduled and every Work applied. Times are reported, not
// asserted.
func TestRunSmallFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet")
	}
	rep, err := Run(context.Background(), Options{Members: 2, Deployments: 20, Policies: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Works != 40 {
		t.Errorf("%d Works, want 2 per Deployment (40)", rep.Works)
	}
	t.Logf("%+v", *rep)
}

func TestRunRejectsBadSizes(t *testing.T) {
	_, err := Run(context.Background(), Options{Members: 0, Deployments: 1, Policies: 1})
	if err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("want a size error, got %v", err)
	}
}
