package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/membership"
)

// TestRescheduleMovesReplicasBack is the RescheduleTask story: a
// Deployment runs on member1 and member2; member1 leaves (is unjoined, which
// removes its copy) and its replicas move to member2; member1 comes back and
// nothing moves by itself; a RescheduleTask moves the replicas back per the
// placement and reports Successful.
func TestRescheduleMovesReplicasBack(t *testing.T) {
	const ns = "e2e-reschedule"
	createNamespace(t, ns)
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	applyYAML(t, policyYAML(ns, "web", "Deployment", "web", staticEqualOver("member1", "member2"))+"---\n"+deploymentYAML(ns, "web", 4))
	waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if len(got) != 2 || got["member1"] != 2 || got["member2"] != 2 {
			return fmt.Errorf("targets %v, want member1=2 member2=2", got)
		}
		return nil
	})
	checkMemberDeployments(t, ns, "web", map[string]int32{"member1": 2, "member2": 2})

	// member1 fails: its replicas move to member2.
	if _, err := membership.Unjoin(context.Background(), hub, "member1", membership.UnjoinOptions{}); err != nil {
		t.Fatal(err)
	}
	rejoined := false
	t.Cleanup(func() {
		if !rejoined {
			rejoin(t, "member1")
		}
	})
	waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member2"] != 4 {
			return fmt.Errorf("targets %v, want member2=4", got)
		}
		return nil
	})
	eventually(t, "member2 runs all 4", func() error {
		return availableIn("member2", key, 4)
	})
	if err := goneFromMember("member1", key, &appsv1.Deployment{}); err != nil {
		t.Errorf("unjoin left member1's copy: %v", err)
	}

	// member1 recovers: nothing moves by itself.
	rejoin(t, "member1")
	rejoined = true
	eventually(t, "member1 serving again", func() error { return clusterServing("member1") })
	before, err := binding(ns, "web", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	after, err := binding(ns, "web", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	if got := targets(after); len(got) != 1 || got["member2"] != 4 || !after.Status.LastScheduledTime.Equal(before.Status.LastScheduledTime) {
		t.Fatalf("member1's return moved replicas by itself: targets %v, lastScheduledTime %v -> %v", got, before.Status.LastScheduledTime, after.Status.LastScheduledTime)
	}

	// A RescheduleTask moves the replicas back per the placement.
	task := waitTaskCompleted(t, createRescheduleTask(t, ns, "web").Name)
	if c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted); c.Reason != "AllSucceeded" ||
		len(task.Status.Targets) != 1 || task.Status.Targets[0].Phase != taskv1alpha1.TargetSuccessful {
		t.Fatalf("task status %+v", task.Status)
	}
	waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if len(got) != 2 || got["member1"] != 2 || got["member2"] != 2 {
			return fmt.Errorf("targets %v, want member1=2 member2=2", got)
		}
		return nil
	})
	checkMemberDeployments(t, ns, "web", map[string]int32{"member1": 2, "member2": 2})
}

// TestRescheduleMissingWorkloadFails: a task naming a workload that has no
// binding reports Failed with the reason.
func TestRescheduleMissingWorkloadFails(t *testing.T) {
	const ns = "e2e-reschedule-missing"
	createNamespace(t, ns)
	task := waitTaskCompleted(t, createRescheduleTask(t, ns, "absent").Name)
	c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
	if c.Reason != "SomeFailed" || len(task.Status.Targets) != 1 {
		t.Fatalf("task status %+v", task.Status)
	}
	want := "no binding for apps/v1 Deployment " + ns + "/absent"
	if got := task.Status.Targets[0]; got.Phase != taskv1alpha1.TargetFailed || got.Reason != want {
		t.Fatalf("target %+v, want Failed: %s", got, want)
	}
}
