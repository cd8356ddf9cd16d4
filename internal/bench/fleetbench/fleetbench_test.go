package fleetbench

import (
	"context"
	"strings"
	"testing"
)

// TestRunSmallFleet runs the benchmark end to end on a small fleet (the
// package's shared one: two members): every binding must get scheduled and
// every Work applied. Times are reported, not asserted.
func TestRunSmallFleet(t *testing.T) {
	ctx, where := onShared(t, "bench")
	o := sharedOptions
	o.Deployments, o.Policies = 20, 2
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	rep, err := run(ctx, o, where)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Works != 40 {
		t.Errorf("%d Works, want 2 per Deployment (40)", rep.Works)
	}
	// The breakdown describes the run: one Work applied per target, every
	// stage measured, the controllers counted.
	applied := 0
	for _, r := range rep.APIRequests {
		if r.Verb == "APPLY" && r.Resource == "works" {
			applied = r.Count
		}
	}
	if applied != 40 {
		t.Errorf("%d Work applies counted, want 40: %+v", applied, rep.APIRequests)
	}
	if rep.Scheduler.PerSecond <= 0 || rep.Execution.PerSecond <= 0 {
		t.Errorf("stages not measured: scheduler %+v, execution %+v", rep.Scheduler, rep.Execution)
	}
	names := map[string]bool{}
	for _, r := range rep.Reconciles {
		names[r.Controller] = true
	}
	for _, c := range []string{"detector", "scheduler-resourcebinding", "execution"} {
		if !names[c] {
			t.Errorf("no reconciles of %s: %+v", c, rep.Reconciles)
		}
	}
	t.Logf("%+v", *rep)
}

func TestRunRejectsBadSizes(t *testing.T) {
	_, err := Run(context.Background(), Options{Members: 0, Deployments: 1, Policies: 1})
	if err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("want a size error, got %v", err)
	}
}
