package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// fhpaSyncPeriod is the FederatedHPA controller's sync period in this
// suite (main_test.go).
const fhpaSyncPeriod = 2 * time.Second

// fhpaDownWindow is the scale-down stabilization window the test's
// FederatedHPA sets in its behavior.
const fhpaDownWindow = 10 * time.Second

// TestFederatedHPAScalesAcrossMembers: a Deployment of 4 replicas of 2
// CPUs divided over member1..member3 by their room, under a FederatedHPA
// targeting 50% CPU. Its simulated CPU goes to 90% in the members (their
// override ConfigMap, no rollout): the template is scaled to 8 in one
// step, and the scheduler divides the 8 replicas by room, all running.
// Back to 10%: the replicas stay at 8 through the scale-down
// stabilization window (ScaleDownStabilized) and go to the minimum, 4,
// only after it. (A member cut off during a scale-up is in
// pkg/controllers/federatedhpa's TestLiveMembers.)
func TestFederatedHPAScalesAcrossMembers(t *testing.T) {
	// Parallel (see parallelTests): it mostly waits on the metrics window,
	// sync periods and the stabilization window. It divides by room, but
	// asserts only the sum and that every replica runs, which the few
	// 100m pods of the other parallel tests on member1..member3 leave
	// room for.
	t.Parallel()
	const ns, name = "e2e-fhpa", "web"
	ctx := context.Background()
	createNamespace(t, ns)
	removeWorkloads(t, ns, members...)
	t.Cleanup(func() {
		for _, m := range members {
			fleetenv.SetSimulatedCPU(t, memberCl[m], ns, name, -1)
		}
	})
	// The scheduler divides by room: wait until every member reports it.
	for _, m := range members {
		eventually(t, m+" reports its room", func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: m}, c); err != nil {
				return err
			}
			if rs := c.Status.ResourceSummary; rs == nil || len(rs.Nodes) == 0 {
				return fmt.Errorf("resource summary %+v", rs)
			}
			return nil
		})
	}
	placement := "clusterAffinity:\n  clusterNames: [member1, member2, member3]\nspreadConstraints:\n- {spreadByField: cluster, minGroups: 3, maxGroups: 3}\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Weighted\n  weightPreference: {dynamicWeight: AvailableReplicas}\n"
	applyYAML(t, policyYAML(ns, name, "Deployment", name, placement)+"---\n"+
		strings.Replace(deploymentYAML(ns, name, 4), "requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: '2', memory: 64Mi}", 1)+
		fmt.Sprintf(`---
apiVersion: autoscaling.shepherd.io/v1alpha1
kind: FederatedHPA
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %[2]s}
  minReplicas: 4
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: %[3]d}
`, ns, name, int(fhpaDownWindow/time.Second)))
	key := client.ObjectKey{Namespace: ns, Name: name}
	fhpa := func() (*autoscalingv1alpha1.FederatedHPA, error) {
		got := &autoscalingv1alpha1.FederatedHPA{}
		return got, hub.Get(ctx, key, got)
	}
	// Every pod measured (ready, and past the CPU rule's first window) at
	// the default 10%: no change below the minimum.
	eventually(t, "4 pods measured in 3 members", func() error {
		got, err := fhpa()
		if err != nil {
			return err
		}
		ready := map[string]int32{}
		for _, c := range got.Status.Clusters {
			ready[c.Name] = c.ReadyPods
		}
		if len(ready) != 3 || sum(ready) != 4 || got.Status.DesiredReplicas != 4 {
			return fmt.Errorf("ready pods %v, desired %d, conditions %+v", ready, got.Status.DesiredReplicas, got.Status.Conditions)
		}
		return nil
	})

	loaded := time.Now()
	for _, m := range members {
		fleetenv.SetSimulatedCPU(t, memberCl[m], ns, name, 90)
	}
	// 90% against 50%: 4 × 1.8 = 7.2, so 8, in one rescale.
	var scaledAt time.Time
	eventually(t, "scaled to 8", func() error {
		got, err := fhpa()
		if err != nil {
			return err
		}
		if got.Status.DesiredReplicas != 8 || got.Status.LastScaleTime == nil {
			return fmt.Errorf("desired %d, conditions %+v", got.Status.DesiredReplicas, got.Status.Conditions)
		}
		scaledAt = got.Status.LastScaleTime.Time
		return nil
	})
	t.Logf("scaled to 8 %s after the load rose (sync period %s)", scaledAt.Sub(loaded).Round(100*time.Millisecond), fhpaSyncPeriod)
	waitPlaced(t, ns, name, "Deployment", func(got map[string]int32) error {
		if sum(got) != 8 || len(got) != 3 {
			return fmt.Errorf("targets %v, want 8 over 3 members", got)
		}
		return nil
	})
	eventually(t, "8 pods running in the members", func() error {
		running := 0
		for _, m := range members {
			d := &appsv1.Deployment{}
			if err := inMember(m, key, d); err != nil {
				return err
			}
			running += int(d.Status.AvailableReplicas)
		}
		if running != 8 {
			return fmt.Errorf("%d available", running)
		}
		return nil
	})

	unloaded := time.Now()
	for _, m := range members {
		fleetenv.SetSimulatedCPU(t, memberCl[m], ns, name, 10)
	}
	eventually(t, "scale-down held by the stabilization window", func() error {
		got, err := fhpa()
		if err != nil {
			return err
		}
		if c := fhpaCondition(got.Status, autoscalingv2.AbleToScale); c.Reason != "ScaleDownStabilized" {
			return fmt.Errorf("AbleToScale %+v", c)
		}
		return nil
	})
	eventually(t, "scaled down to 4", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(ctx, key, d); err != nil {
			return err
		}
		if *d.Spec.Replicas != 4 {
			return fmt.Errorf("replicas %d", *d.Spec.Replicas)
		}
		return nil
	})
	// The status is written after the scale, in the same write as the
	// last scale time: read it once it says so.
	var got *autoscalingv1alpha1.FederatedHPA
	eventually(t, "the scale-down in the FederatedHPA's status", func() error {
		var err error
		if got, err = fhpa(); err != nil {
			return err
		}
		if got.Status.DesiredReplicas != 4 || got.Status.LastScaleTime == nil {
			return fmt.Errorf("desired %d, last scale %v", got.Status.DesiredReplicas, got.Status.LastScaleTime)
		}
		return nil
	})
	// The window runs from the last computation that read the high load,
	// at most a sync period before it fell (two, for a late one); status
	// times are in seconds. Without the window the count would fall at
	// the first computation after the load did.
	at := got.Status.LastScaleTime.Time
	if earliest := unloaded.Add(fhpaDownWindow - 2*fhpaSyncPeriod - time.Second); at.Before(earliest) {
		t.Errorf("scaled down %s after the load fell, before the %s window ended", at.Sub(unloaded).Round(100*time.Millisecond), fhpaDownWindow)
	}
	t.Logf("scaled down to 4 %s after the load fell (window %s)", at.Sub(unloaded).Round(100*time.Millisecond), fhpaDownWindow)
}

func fhpaCondition(st autoscalingv1alpha1.FederatedHPAStatus, kind autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range st.Conditions {
		if c.Type == kind {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}
