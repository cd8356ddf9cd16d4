package fleetbench

import (
	"context"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestRunSmallFleet runs the benchmark end to end on a small fleet: every
// binding must get scheduled and every Work applied. Times are reported, not
// asserted.
func TestRunSmallFleet(t *testing.T) {
	testenv.Heavy(t)
	rep, err := Run(context.Background(), Options{Members: 2, Deployments: 20, Policies: 2})
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

// TestRunFiniteCapacity runs the finite-capacity mode on two members with
// room for 60% of the replicas: the hub fills them, places nothing beyond
// their nodes, and no pod is left Pending in a member.
func TestRunFiniteCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet")
	}
	rep, err := Run(context.Background(), Options{Members: 2, Deployments: 20, Policies: 2, Capacity: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Capacity
	if c == nil {
		t.Fatal("no capacity report")
	}
	t.Logf("%+v", *c)
	if c.RoomReplicas != 24 {
		t.Errorf("room for %d replicas, want 24", c.RoomReplicas)
	}
	if c.PendingPods != 0 || c.ReplicasBeyondRoom != 0 {
		t.Errorf("%d pods Pending, %d replicas beyond room: want 0 and 0", c.PendingPods, c.ReplicasBeyondRoom)
	}
	if c.ScheduledWorkloads+c.UnschedulableWorkloads != 20 || c.UnschedulableWorkloads < 8 {
		t.Errorf("%d Scheduled, %d Unschedulable: want 20 in all, at least 8 (16 replicas) without room", c.ScheduledWorkloads, c.UnschedulableWorkloads)
	}
	if c.RunningPods != c.PlacedReplicas {
		t.Errorf("%d pods run for %d replicas placed", c.RunningPods, c.PlacedReplicas)
	}
}
