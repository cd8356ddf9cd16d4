package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestRoomIsCountedPerNode: member3 has two nodes of 8 CPUs, 16 in all.
// Replicas of 5 CPUs fit once per node, so three of them, which the sums
// would take, are Unschedulable on the hub (the feasible clusters fit two),
// and the member is not touched; two are placed and all run, none Pending.
func TestRoomIsCountedPerNode(t *testing.T) {
	const ns = "e2e-room"
	ctx := context.Background()
	createNamespace(t, ns)
	removeWorkloads(t, ns, "member3")
	eventually(t, "member3 reports its node model", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "member3"}, c); err != nil {
			return err
		}
		if rs := c.Status.ResourceSummary; rs == nil || len(rs.Nodes) == 0 {
			return fmt.Errorf("resource summary %+v", rs)
		}
		return nil
	})
	placement := "clusterAffinity:\n  clusterNames: [member3]\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Aggregated\n"
	big := func(name string, replicas int) string {
		return policyYAML(ns, name, "Deployment", name, placement) + "---\n" +
			strings.Replace(deploymentYAML(ns, name, replicas), "requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: '5', memory: 64Mi}", 1)
	}

	applyYAML(t, big("three", 3))
	eventually(t, "three: Unschedulable for room on any one node", func() error {
		rb, err := binding(ns, "three", "Deployment")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionScheduled)
		// The sums (16 CPUs) would hold three: the nodes hold two.
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "replicas: 3 requested, feasible clusters fit 2; room: member3 fits 2 (room on any one node: ") {
			return fmt.Errorf("Scheduled %+v", c)
		}
		if len(rb.Spec.Clusters) != 0 {
			return fmt.Errorf("targets %+v", rb.Spec.Clusters)
		}
		return nil
	})

	applyYAML(t, big("two", 2))
	eventually(t, "two: both replicas run in member3, none Pending", func() error {
		var pods corev1.PodList
		if err := memberCl["member3"].List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Labels["app"] == "three" {
				return fmt.Errorf("a pod of the unschedulable workload: %s", p.Name)
			}
			switch p.Status.Phase {
			case corev1.PodRunning:
				running++
			case corev1.PodPending:
				if p.Spec.NodeName == "" {
					return fmt.Errorf("pod %s is Pending, unscheduled", p.Name)
				}
			}
		}
		if running != 2 {
			return fmt.Errorf("%d of 2 pods running", running)
		}
		return nil
	})
}

// TestBurstFitsTheMember: ten Deployments applied at once, each of two
// replicas of 2 CPUs, all for member2 (two nodes of 8 CPUs). Each cycle
// sees the replicas the ones before it placed (in flight, not yet in the
// member's summary), so no more are placed than the nodes hold: the
// member runs them all, none Pending, and the rest are Unschedulable on
// the hub.
func TestBurstFitsTheMember(t *testing.T) {
	const ns, workloads = "e2e-burst", 10
	ctx := context.Background()
	createNamespace(t, ns)
	removeWorkloads(t, ns, "member2")
	// What member2 holds now, node by node (other tests may run there).
	var capacity int64
	eventually(t, "member2 reports its node model", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "member2"}, c); err != nil {
			return err
		}
		rs := c.Status.ResourceSummary
		if rs == nil || len(rs.Nodes) == 0 {
			return fmt.Errorf("resource summary %+v", rs)
		}
		capacity = 0
		for _, g := range rs.Nodes {
			capacity += int64(g.Count) * min(g.Free.Cpu().MilliValue()/2000, g.Free.Pods().Value())
		}
		return nil
	})
	placedWant := min(workloads, capacity/2)
	if placedWant == workloads {
		t.Fatalf("member2 holds %d replicas of 2 CPUs: the burst would fit, the test proves nothing", capacity)
	}
	placement := "clusterAffinity:\n  clusterNames: [member2]\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Weighted\n  weightPreference: {dynamicWeight: AvailableReplicas}\n"
	var burst []string
	for i := range workloads {
		name := fmt.Sprintf("w%02d", i)
		burst = append(burst, policyYAML(ns, name, "Deployment", name, placement)+"---\n"+
			strings.Replace(deploymentYAML(ns, name, 2), "requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: '2', memory: 64Mi}", 1))
	}
	applyYAML(t, strings.Join(burst, "---\n"))

	eventually(t, fmt.Sprintf("%d workloads placed, the others Unschedulable", placedWant), func() error {
		placed, unschedulable := int64(0), 0
		for i := range workloads {
			rb, err := binding(ns, fmt.Sprintf("w%02d", i), "Deployment")
			if err != nil {
				return err
			}
			c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionScheduled)
			switch {
			case c == nil:
				return fmt.Errorf("%s not scheduled yet", rb.Name)
			case c.Status == metav1.ConditionTrue:
				placed++
			default:
				unschedulable++
			}
		}
		if placed > placedWant {
			return fmt.Errorf("%d placed, the nodes hold %d", placed, placedWant)
		}
		if placed != placedWant {
			return fmt.Errorf("%d placed (%d unschedulable), want %d", placed, unschedulable, placedWant)
		}
		return nil
	})
	eventually(t, "every placed replica runs in member2, none Pending", func() error {
		var pods corev1.PodList
		if err := memberCl["member2"].List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		running := int64(0)
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				return fmt.Errorf("pod %s is Pending, unscheduled", p.Name)
			}
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running != 2*placedWant {
			return fmt.Errorf("%d of %d pods running", running, 2*placedWant)
		}
		return nil
	})
}
