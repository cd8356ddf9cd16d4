package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestApplicationFailoverGraciously: web runs on member1, its pods there
// can no longer run, it stays Unhealthy past the 5 s toleration and moves
// to member2; the old copy goes once the new one is Healthy; member1 stays
// blocked.
func TestApplicationFailoverGraciously(t *testing.T) {
	// Parallel (see parallelTests): it mostly waits for the toleration, in
	// its own namespace, starved on member1 only there.
	t.Parallel()
	const ns = "failover-demo"
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	applyExample(t, "application-failover.yaml")
	waitPlaced(t, ns, "web", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member1"] == 0 {
			return fmt.Errorf("targets %v, want member1", got)
		}
		return nil
	})
	eventually(t, "web available on member1", func() error { return deploymentAvailable("member1", key) })
	waitHealthyOn(t, ns, "web", "Deployment", "member1")

	defer starve(t, "member1", ns, "web")()
	rb := waitEvicted(t, ns, "web", "Deployment", "member1")
	if h := rb.Spec.EvictionHistory[0]; h.Reason != "ApplicationFailure" {
		t.Errorf("history %+v", h)
	}
	eventually(t, "web available on member2", func() error { return deploymentAvailable("member2", key) })
	eventually(t, "old copy removed from member1 once member2 is Healthy", func() error {
		return goneFromMember("member1", key, &appsv1.Deployment{})
	})
	eventually(t, "task gone, member1 blocked", func() error {
		rb, err := binding(ns, "web", "Deployment")
		if err != nil {
			return err
		}
		if len(rb.Spec.GracefulEvictionTasks) > 0 {
			return fmt.Errorf("tasks %+v", rb.Spec.GracefulEvictionTasks)
		}
		for _, d := range rb.Status.SchedulingDecisions {
			if d.ClusterName == "member1" && !d.Selected && strings.Contains(d.Reason, "evicted") {
				return nil
			}
		}
		return fmt.Errorf("decisions %+v", rb.Status.SchedulingDecisions)
	})
}

// TestPurgeNeverWaitsForConfirmation: after the failover, the old copy
// stays on member1 and the binding says so until a user confirms.
func TestPurgeNeverWaitsForConfirmation(t *testing.T) {
	// Parallel (see parallelTests), as TestApplicationFailoverGraciously.
	t.Parallel()
	const ns = "failover-never"
	key := client.ObjectKey{Namespace: ns, Name: "api"}
	applyExample(t, "purge-never.yaml")
	waitPlaced(t, ns, "api", "Deployment", func(got map[string]int32) error {
		if len(got) != 1 || got["member1"] == 0 {
			return fmt.Errorf("targets %v, want member1", got)
		}
		return nil
	})
	waitHealthyOn(t, ns, "api", "Deployment", "member1")
	defer starve(t, "member1", ns, "api")()
	waitEvicted(t, ns, "api", "Deployment", "member1")
	eventually(t, "api available on member2", func() error { return deploymentAvailable("member2", key) })
	eventually(t, "awaiting confirmation", func() error {
		rb, err := binding(ns, "api", "Deployment")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, "EvictionPending")
		if c == nil || c.Reason != "AwaitingConfirmation" {
			return fmt.Errorf("conditions %+v", rb.Status.Conditions)
		}
		return nil
	})
	if err := inMember("member1", key, &appsv1.Deployment{}); err != nil {
		t.Fatalf("the old copy went without confirmation: %v", err)
	}
	eventually(t, "confirm", func() error {
		rb, err := binding(ns, "api", "Deployment")
		if err != nil {
			return err
		}
		for i := range rb.Spec.GracefulEvictionTasks {
			rb.Spec.GracefulEvictionTasks[i].Confirmed = true
		}
		return hub.Update(context.Background(), rb)
	})
	eventually(t, "old copy removed after confirmation", func() error {
		return goneFromMember("member1", key, &appsv1.Deployment{})
	})
}

// TestPreconditionsHoldBack: a workload that never was Healthy on member1
// (healthyState: Healthy) does not fail over, however long it is
// Unhealthy; the same workload with delaySeconds waits for the delay.
func TestPreconditionsHoldBack(t *testing.T) {
	// Parallel (see parallelTests): it mostly waits for delaySeconds, in
	// its own namespace, starved on member1 only there.
	t.Parallel()
	const ns = "failover-precond"
	createNamespace(t, ns)
	// The namespace exists on member1 first, starved, so web never runs there.
	if err := memberCl["member1"].Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	defer starve(t, "member1", ns, "never-healthy")()
	defer starve(t, "member1", ns, "delayed")()
	policy := func(name, pre string) string {
		return policyYAML(ns, name, "Deployment", name, `clusterAffinity:
  clusterNames: [member1, member2]
preferredClusterAffinities:
- {weight: 100, preference: {clusterNames: [member1]}}
spreadConstraints:
- {spreadByField: cluster, minGroups: 1, maxGroups: 1}`) + `  failover:
    application:
      preConditions: ` + pre + `
      decisionConditions: {tolerationSeconds: 1}
      purgeMode: Immediately
`
	}
	applyYAML(t, policy("never-healthy", "{healthyState: Healthy}")+"---\n"+deploymentYAML(ns, "never-healthy", 1)+
		"---\n"+policy("delayed", "{delaySeconds: 20}")+"---\n"+deploymentYAML(ns, "delayed", 1))
	start := time.Now()
	rb := waitEvicted(t, ns, "delayed", "Deployment", "member1")
	first := aggregated(rb, "member1")
	if first != nil && first.FirstCollectedTime != nil && rb.Spec.EvictionHistory[0].EvictedAt.Sub(first.FirstCollectedTime.Time) < 19*time.Second {
		t.Errorf("evicted %s after the status was first collected, before delaySeconds 20", rb.Spec.EvictionHistory[0].EvictedAt.Sub(first.FirstCollectedTime.Time))
	}
	if time.Since(start) < 15*time.Second {
		t.Errorf("delayed workload moved after %s", time.Since(start))
	}
	rb, err := binding(ns, "never-healthy", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := targets(rb)["member1"]; !ok || len(rb.Spec.EvictionHistory) > 0 {
		t.Errorf("a never Healthy workload failed over: targets %v history %+v", targets(rb), rb.Spec.EvictionHistory)
	}
}

// TestCELInterpreterDrivesFailover: a HealthInterpreter makes ConfigMaps
// with healthy: "false" Unhealthy; flipping it on member1 moves the
// ConfigMap to member2. A broken expression is refused by the webhook
// that `shepherd up` serves.
func TestCELInterpreterDrivesFailover(t *testing.T) {
	const ns = "failover-cel"
	applyExample(t, "configmap-health.yaml")
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "failover", "healthinterpreter-refused.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	err = hub.Create(context.Background(), objs[0])
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.health.expression") || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("creating a HealthInterpreter that does not compile: want Invalid naming spec.health.expression, got %v", err)
	}
	waitPlaced(t, ns, "feature-flags", "ConfigMap", func(got map[string]int32) error {
		if _, ok := got["member1"]; !ok || len(got) != 1 {
			return fmt.Errorf("targets %v, want member1", got)
		}
		return nil
	})
	waitHealthyOn(t, ns, "feature-flags", "ConfigMap", "member1")
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: ns, Name: "feature-flags"}
	if err := inMember("member1", key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["healthy"] = "false"
	if err := memberCl["member1"].Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitEvicted(t, ns, "feature-flags", "ConfigMap", "member1")
	eventually(t, "feature-flags on member2", func() error { return inMember("member2", key, &corev1.ConfigMap{}) })
}

// clusterFailoverToleration is cache's tolerationSeconds in the example.
const clusterFailoverToleration = 30 * time.Second

// TestClusterFailover stops member5: once tainted NoExecute, batch (no
// toleration) moves to member3 at once; cache tolerates the taint for 30 s
// and moves after that.
func TestClusterFailover(t *testing.T) {
	// Parallel (see parallelTests): only this test uses member5, and it moves ConfigMaps to member3.
	t.Parallel()
	const ns = "failover-cluster"
	applyExample(t, "cluster-failover.yaml")
	for _, name := range []string{"batch", "cache"} {
		waitPlaced(t, ns, name, "ConfigMap", func(got map[string]int32) error {
			if _, ok := got[failoverMember]; !ok {
				return fmt.Errorf("targets %v, want %s", got, failoverMember)
			}
			return nil
		})
		eventually(t, name+" in "+failoverMember, func() error {
			return inMember(failoverMember, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
		})
	}
	if err := fleet.Member(failoverMember).Stop(); err != nil {
		t.Fatal(err)
	}
	tainted := time.Now()
	waitEvicted(t, ns, "batch", "ConfigMap", failoverMember)
	eventually(t, "batch on member3", func() error {
		return inMember("member3", client.ObjectKey{Namespace: ns, Name: "batch"}, &corev1.ConfigMap{})
	})
	rb, err := binding(ns, "cache", "ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := targets(rb)[failoverMember]; !ok {
		t.Fatalf("cache left %s before its toleration ran out (%s after the stop)", failoverMember, time.Since(tainted))
	}
	rb = waitEvicted(t, ns, "cache", "ConfigMap", failoverMember)
	if h := rb.Spec.EvictionHistory[0]; h.Reason != "TaintUntolerated" || h.EvictedAt.Sub(tainted) < clusterFailoverToleration {
		t.Errorf("cache evicted %s after the stop (%s), want after its %s toleration", h.EvictedAt.Sub(tainted), h.Reason, clusterFailoverToleration)
	}
}
