package cronfederatedhpa_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/cronfederatedhpa"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestLiveRuleRunsOnceAcrossRestarts runs the controller on a live fleet
// (a hub and a simulated member, every other controller as installed),
// under the controller manager's ServiceAccount, with its clock set a few
// seconds before a minute: the rule due at that minute sets a
// propagated Deployment's replicas, in the member too. The controller is
// then stopped and started again (a new reconciler reading the same
// status) with its clock past the next rule's minute: that rule is caught
// up once, and the first is not run again.
func TestLiveRuleRunsOnceAcrossRestarts(t *testing.T) {
	testenv.Heavy(t)
	env, err := fleetenv.StartFleet("cronfhpa-live", localfleet.Options{
		Fleet:       fleetenv.SmallFleet(1),
		Controllers: controllermanager.Options{Controllers: []string{"*", "-" + cronfederatedhpa.ControllerName}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	ctx := context.Background()
	// The controller's clock: offset from the real one.
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	wall := time.Now().UTC()
	offset.Store(int64(wall.Truncate(time.Minute).Add(57 * time.Second).Sub(wall)))
	first := now().UTC().Truncate(time.Minute).Add(time.Minute)
	second := first.Add(time.Minute)
	// The controller runs as the controller manager does, under its
	// ServiceAccount; stop and start it again to restart it.
	var mgr *testenv.Manager
	start := func() {
		hub := &testenv.Hub{Config: env.Fleet.ControllersConfig()}
		var err error
		mgr, err = hub.StartManager(func(m ctrl.Manager) error {
			return cronfederatedhpa.Setup(controllerdeps.Deps{Manager: m}, cronfederatedhpa.Options{Location: time.UTC, Now: now})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stop := func() {
		if mgr != nil {
			if err := mgr.Stop(); err != nil {
				t.Errorf("stopping the controller: %v", err)
			}
			mgr = nil
		}
	}
	t.Cleanup(stop)
	start()

	const ns, name = "cronfhpa-live", "batch"
	fleetenv.CreateNamespace(t, env.Hub, ns)
	cron := func(at time.Time) string { return fmt.Sprintf("%d %d * * *", at.Minute(), at.Hour()) }
	fleetenv.ApplyYAML(t, env.Hub, "test", fleetenv.DeploymentYAML(ns, name, 1)+fmt.Sprintf(`---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: %[2]s}
  placement:
    clusterAffinity: {clusterNames: [member1]}
---
apiVersion: autoscaling.shepherd.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %[2]s}
  rules:
  - {name: first, schedule: %[3]q, targetReplicas: 5}
  - {name: second, schedule: %[4]q, targetReplicas: 3}
`, ns, name, cron(first), cron(second)))
	key := client.ObjectKey{Namespace: ns, Name: name}

	// runs checks each rule's successful runs: their scheduled times.
	runs := func(want map[string][]time.Time) error {
		cr := &autoscalingv1alpha1.CronFederatedHPA{}
		if err := env.Hub.Get(ctx, key, cr); err != nil {
			return err
		}
		got := map[string][]time.Time{}
		for _, h := range cr.Status.ExecutionHistories {
			for _, e := range h.SuccessfulExecutions {
				got[h.RuleName] = append(got[h.RuleName], e.ScheduleTime.UTC())
			}
			if len(h.FailedExecutions) > 0 {
				return fmt.Errorf("rule %s failed: %+v", h.RuleName, h.FailedExecutions)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("runs %v, want %v", got, want)
		}
		return nil
	}
	replicas := func(c client.Client, want int32) func() error {
		return func() error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, key, d); err != nil {
				return err
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
				return fmt.Errorf("replicas %v", d.Spec.Replicas)
			}
			return nil
		}
	}

	t.Run("the rule due runs and its replicas reach the member", func(t *testing.T) {
		testenv.Eventually(t, fleetenv.WaitTimeout, "first run once", func() error {
			return runs(map[string][]time.Time{"first": {first}})
		})
		testenv.Eventually(t, fleetenv.WaitTimeout, "5 replicas on the hub", replicas(env.Hub, 5))
		testenv.Eventually(t, fleetenv.WaitTimeout, "5 replicas in member1", replicas(env.Members["member1"], 5))
	})

	t.Run("restarted past the next minute: that rule caught up once, the first not again", func(t *testing.T) {
		stop()
		offset.Add(int64(90 * time.Second))
		start()
		testenv.Eventually(t, fleetenv.WaitTimeout, "second caught up", func() error {
			return runs(map[string][]time.Time{"first": {first}, "second": {second}})
		})
		testenv.Eventually(t, fleetenv.WaitTimeout, "3 replicas in member1", replicas(env.Members["member1"], 3))
		if err := runs(map[string][]time.Time{"first": {first}, "second": {second}}); err != nil {
			t.Fatal(err)
		}
	})
}
