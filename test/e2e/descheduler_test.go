package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// TestUnschedulableReplicasMove: a Deployment of replicas of 2 CPUs,
// divided by dynamic weights over member1 and member2 (spread over both:
// 2 + 2, running).
// member2's nodes are then tainted NoSchedule (the hub does not model
// taints: it still sees room there) and the Deployment scaled to 8: member2
// gets 1 or 2 more, which its scheduler cannot place. The work status controller
// reports them; member2's nodes are then filled (pods tolerating the taint),
// so the hub sees no room left there. After the policy's threshold (15 s)
// the Pending replicas are taken back from member2 and run on member1;
// member2 keeps the 2 it runs, and no running pod was evicted.
func TestUnschedulableReplicasMove(t *testing.T) {
	// Not parallel (see parallelTests): it taints and fills member2's
	// nodes, where the parallel tests run pods.
	const ns, name, stuck, free = "e2e-pending", "web", "member2", "member1"
	ctx := context.Background()
	createNamespace(t, ns)
	removeWorkloads(t, ns, free, stuck)
	placement := "clusterAffinity:\n  clusterNames: [member1, member2]\nspreadConstraints:\n- {spreadByField: cluster, minGroups: 2, maxGroups: 2}\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Weighted\n  weightPreference: {dynamicWeight: AvailableReplicas}\n  unschedulableThresholdSeconds: 15\n"
	deploy := func(replicas int) string {
		return strings.Replace(deploymentYAML(ns, name, replicas), "requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: '2', memory: 64Mi}", 1)
	}
	applyYAML(t, policyYAML(ns, name, "Deployment", name, placement)+"---\n"+deploy(4))
	waitPlaced(t, ns, name, "Deployment", func(m map[string]int32) error {
		if m[free] != 2 || m[stuck] != 2 {
			return fmt.Errorf("targets %v, want 2 + 2", m)
		}
		return nil
	})
	running := map[string]map[types.UID]bool{}
	for _, c := range []string{free, stuck} {
		eventually(t, "2 pods of web running in "+c, func() error {
			uids, pending, err := webPods(ctx, c, ns, name)
			if err != nil {
				return err
			}
			if len(uids) != 2 || pending != 0 {
				return fmt.Errorf("%d running, %d pending", len(uids), pending)
			}
			running[c] = uids
			return nil
		})
	}

	// member2's nodes take no new pod but the fillers'.
	taint := corev1.Taint{Key: "e2e.shepherd.io/pending", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	setTaint(t, stuck, &taint)
	t.Cleanup(func() { setTaint(t, stuck, nil) })

	// Dynamic weights divide the 8 by the room each member reports, which
	// what earlier tests left running shifts a little: member2 gets 4, or
	// 3. Whatever it gets beyond the 2 it runs stays Pending.
	applyYAML(t, deploy(8))
	var pending int32
	waitPlaced(t, ns, name, "Deployment", func(m map[string]int32) error {
		if m[free]+m[stuck] != 8 || m[stuck] < 3 {
			return fmt.Errorf("targets %v, want 8 with at least 3 on %s", m, stuck)
		}
		pending = m[stuck] - 2
		return nil
	})
	eventually(t, "member2's Pending replicas reported unschedulable", func() error {
		rb, err := binding(ns, name, "Deployment")
		if err != nil {
			return err
		}
		if it := aggregated(rb, stuck); it == nil || it.UnschedulableReplicas != pending || it.UnschedulableSince == nil {
			return fmt.Errorf("aggregated status of %s: %+v", stuck, it)
		}
		return nil
	})
	fill(t, ctx, stuck, ns+"-filler", taint)
	eventually(t, "the hub sees no room for a 2-CPU replica in member2", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: stuck}, c); err != nil {
			return err
		}
		rs := c.Status.ResourceSummary
		if rs == nil || len(rs.Nodes) == 0 {
			return fmt.Errorf("no node model")
		}
		for _, g := range rs.Nodes {
			if g.Free.Cpu().MilliValue() >= 2000 {
				return fmt.Errorf("room %v", rs.Nodes)
			}
		}
		return nil
	})

	eventually(t, "the Pending replicas moved to member1: 6 + 2", func() error {
		rb, err := binding(ns, name, "Deployment")
		if err != nil {
			return err
		}
		if m := targets(rb); m[free] != 6 || m[stuck] != 2 {
			return fmt.Errorf("targets %v", m)
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, "ReplicasDescheduled")
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, fmt.Sprintf("%d from member2 (keeps 2)", pending)) {
			return fmt.Errorf("ReplicasDescheduled %+v", c)
		}
		return nil
	})
	for c, want := range map[string]int{free: 6, stuck: 2} {
		eventually(t, fmt.Sprintf("%d pods of web running in %s, none Pending", want, c), func() error {
			uids, pending, err := webPods(ctx, c, ns, name)
			if err != nil {
				return err
			}
			if len(uids) != want || pending != 0 {
				return fmt.Errorf("%d running, %d pending", len(uids), pending)
			}
			for uid := range running[c] {
				if !uids[uid] {
					return fmt.Errorf("running pod %s was evicted", uid)
				}
			}
			return nil
		})
	}
	var evs corev1.EventList
	if err := hub.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range evs.Items {
		if e.Reason == "ReplicasDescheduled" && strings.Contains(e.Message, fmt.Sprintf("Moved %d replicas from cluster member2", pending)) {
			seen[e.InvolvedObject.Kind] = true
		}
	}
	if !seen["ResourceBinding"] || !seen["Deployment"] {
		t.Errorf("ReplicasDescheduled events on %v, want the binding and the Deployment", seen)
	}
}

// webPods returns the running pods of app in a member and how many are
// Pending.
func webPods(ctx context.Context, cluster, ns, app string) (map[types.UID]bool, int, error) {
	var pods corev1.PodList
	if err := memberCl[cluster].List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, 0, err
	}
	run, pending := map[types.UID]bool{}, 0
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodRunning:
			run[p.UID] = true
		case p.Status.Phase == corev1.PodPending:
			pending++
		}
	}
	return run, pending, nil
}

// setTaint puts taint on every node of the member (nil: takes it off).
func setTaint(t *testing.T, cluster string, taint *corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	var nodes corev1.NodeList
	if err := memberCl[cluster].List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		orig := n.DeepCopy()
		var kept []corev1.Taint
		for _, x := range n.Spec.Taints {
			if x.Key != "e2e.shepherd.io/pending" {
				kept = append(kept, x)
			}
		}
		if taint != nil {
			kept = append(kept, *taint)
		}
		n.Spec.Taints = kept
		if err := memberCl[cluster].Patch(ctx, n, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
}

// fill runs, directly in the member, pods of 1 CPU tolerating taint until
// its nodes have less than one CPU free each; the namespace goes at the
// end of the test, which waits until its pods are gone: the tests after
// it place on member2 and must find its room again.
func fill(t *testing.T, ctx context.Context, cluster, ns string, taint corev1.Taint) {
	t.Helper()
	c := memberCl[cluster]
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Errorf("deleting the fillers' namespace: %v", err)
			return
		}
		eventually(t, "the fillers gone from "+cluster, func() error {
			var ps corev1.PodList
			if err := c.List(ctx, &ps, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(ps.Items) > 0 {
				return fmt.Errorf("%d left", len(ps.Items))
			}
			return nil
		})
	})
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		t.Fatal(err)
	}
	// Node by node, and each filler bound to its node: a sum over the
	// nodes counts room no 1-CPU pod fits in (half a CPU on each of two
	// nodes), and the member's scheduler may meanwhile give a node's room
	// to a pod of another test's workload.
	free := map[string]int64{}
	for _, n := range nodes.Items {
		free[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, ctr := range p.Spec.Containers {
			free[p.Spec.NodeName] -= ctr.Resources.Requests.Cpu().MilliValue()
		}
	}
	i := 0
	for _, node := range slices.Sorted(maps.Keys(free)) {
		for range max(0, free[node]/1000) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("filler-%d", i)},
				Spec: corev1.PodSpec{
					NodeName:    node,
					Tolerations: []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect}},
					Containers: []corev1.Container{{Name: "filler", Image: "pause", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
				},
			}
			if err := c.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	eventually(t, "the fillers are placed", func() error {
		var ps corev1.PodList
		if err := c.List(ctx, &ps, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, p := range ps.Items {
			if p.Spec.NodeName == "" {
				return fmt.Errorf("filler %s not placed", p.Name)
			}
		}
		return nil
	})
}
