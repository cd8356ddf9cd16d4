package capacity

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var rayClusterKind = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"}

// rayCluster is a RayCluster of one head of 2 CPUs and one worker group,
// "workers", of workers × 4 CPUs, and a policy placing RayClusters on
// every member that holds them (Duplicated: a gang goes whole to each
// cluster selected).
func rayCluster(ns, name string, workers int) string {
	return fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ray, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: ray.io/v1, kind: RayCluster}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: "2", memory: 2Gi}}}]
  workerGroupSpecs:
  - groupName: workers
    replicas: %[3]d
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray, resources: {requests: {cpu: "4", memory: 4Gi}}}]
`, ns, name, workers)
}

// TestGangRunsWhereItFitsNodeByNode: a RayCluster (a gang of a head and a
// worker group) goes whole to the one member whose nodes hold every pod,
// and that member's simulated Ray operator and scheduler run all of them:
// narrow sums more CPUs than the gang asks but no node of it holds a
// worker, a1 holds the head and three workers only. A gang no member holds
// whole goes nowhere. Either way no other member gets anything.
func TestGangRunsWhereItFitsNodeByNode(t *testing.T) {
	for i, tc := range []struct {
		name    string
		workers int
		// placed is the member the gang runs in; "" when it is Unschedulable.
		placed string
		// reasons are what the scheduling decisions say of clusters the
		// gang does not fit.
		reasons map[string]string
	}{
		{
			name: "fits one member whole", workers: 4, placed: "wide",
			reasons: map[string]string{
				"narrow": `component "workers" (4 × cpu 4, memory 4Gi) does not fit: 0 of 4 fit on the nodes of narrow`,
				"a1":     `component "workers" (4 × cpu 4, memory 4Gi) does not fit: 3 of 4 fit on the nodes of a1`,
				"frag":   `component "ray-head" (1 × cpu 2, memory 2Gi) does not fit: 0 of 1 fit on the nodes of frag`,
			},
		},
		{
			name: "fits no member whole", workers: 6,
			reasons: map[string]string{
				"wide":   `component "workers" (6 × cpu 4, memory 4Gi) does not fit: 5 of 6 fit on the nodes of wide`,
				"narrow": `component "workers" (6 × cpu 4, memory 4Gi) does not fit: 0 of 6 fit on the nodes of narrow`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := fmt.Sprintf("gang-%d", i)
			ctx := context.Background()
			fleetenv.CreateNamespace(t, hub, ns)
			waitFleetEmpty(t)
			deleteRayClusters(t, ns)
			fleetenv.ApplyYAML(t, hub, "capacity", rayCluster(ns, "train", tc.workers))

			b := &workv1alpha1.ResourceBinding{}
			fleetenv.Eventually(t, "the binding scheduled", func() error {
				if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BindingName("RayCluster", "train")}, b); err != nil {
					return err
				}
				c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled)
				switch {
				case c == nil || c.ObservedGeneration != b.Generation:
					return fmt.Errorf("not scheduled yet: %+v", c)
				case (c.Status == metav1.ConditionTrue) != (tc.placed != ""):
					return fmt.Errorf("Scheduled %s: %s", c.Status, c.Message)
				}
				return nil
			})
			decisions := map[string]workv1alpha1.ClusterDecision{}
			for _, d := range b.Status.SchedulingDecisions {
				decisions[d.ClusterName] = d
			}
			if tc.placed != "" && !decisions[tc.placed].Selected {
				t.Errorf("%s not selected: %q", tc.placed, decisions[tc.placed].Reason)
			}
			for cluster, want := range tc.reasons {
				if d := decisions[cluster]; d.Selected || d.Reason != want {
					t.Errorf("%s: selected %v, %q; want %q", cluster, d.Selected, d.Reason, want)
				}
			}
			var wantTargets []workv1alpha1.TargetCluster
			if tc.placed != "" {
				wantTargets = []workv1alpha1.TargetCluster{{Name: tc.placed, Components: []workv1alpha1.TargetComponent{
					{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: int32(tc.workers)}}}}
			}
			var targets []workv1alpha1.TargetCluster
			for _, c := range b.Spec.Clusters {
				targets = append(targets, workv1alpha1.TargetCluster{Name: c.Name, Replicas: c.Replicas, Components: c.Components})
			}
			if !reflect.DeepEqual(targets, wantTargets) {
				t.Fatalf("targets %+v, want %+v", targets, wantTargets)
			}

			if tc.placed != "" {
				fleetenv.Eventually(t, fmt.Sprintf("the head and %d workers run in %s", tc.workers, tc.placed), func() error {
					return gangRuns(ctx, tc.placed, ns, "train", tc.workers)
				})
			}
			// Once the gang runs where it was placed (or at once, placed
			// nowhere), the Works and the other members: one Work, for the
			// member it runs in, and nothing of it anywhere else.
			works := &workv1alpha1.WorkList{}
			if err := hub.List(ctx, works, client.MatchingLabels(names.BindingLabels(names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: b.Name}))); err != nil {
				t.Fatal(err)
			}
			var worksIn, wantWorks []string
			for _, w := range works.Items {
				worksIn = append(worksIn, w.Namespace)
			}
			if tc.placed != "" {
				wantWorks = []string{names.ExecutionNamespace(tc.placed)}
			}
			if !reflect.DeepEqual(worksIn, wantWorks) {
				t.Errorf("Works in %v, want %v", worksIn, wantWorks)
			}
			for member := range memberCl {
				if member == tc.placed {
					continue
				}
				if rcs, pods, err := rayObjects(ctx, member, ns); err != nil || rcs+pods > 0 {
					t.Errorf("%s: %d RayClusters and %d pods of %s (%v), want none", member, rcs, pods, ns, err)
				}
			}
		})
	}
}

// gangRuns says whether the RayCluster name of ns runs in member as its
// spec asks: one head and workers workers, each with KubeRay's labels,
// bound to a node and Running. The error names a pod the member's
// scheduler found no node for.
func gangRuns(ctx context.Context, member, ns, name string, workers int) error {
	var pods corev1.PodList
	if err := memberCl[member].List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err
	}
	groups := map[string]int{}
	for _, p := range pods.Items {
		if p.Labels["ray.io/cluster"] != name {
			return fmt.Errorf("pod %s is not labelled ray.io/cluster=%s: %v", p.Name, name, p.Labels)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return fmt.Errorf("pod %s is unschedulable in %s: %s", p.Name, member, c.Message)
			}
		}
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s: node %q, %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
		groups[p.Labels["ray.io/node-type"]+"/"+p.Labels["ray.io/group"]]++
	}
	if want := map[string]int{"head/headgroup": 1, "worker/workers": workers}; !reflect.DeepEqual(groups, want) {
		return fmt.Errorf("pods by node type and group %v, want %v", groups, want)
	}
	return nil
}

// rayObjects counts the RayClusters and pods of ns in member.
func rayObjects(ctx context.Context, member, ns string) (rayClusters, pods int, _ error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(rayClusterKind.GroupVersion().WithKind("RayClusterList"))
	if err := memberCl[member].List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	var podList corev1.PodList
	if err := memberCl[member].List(ctx, &podList, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	return len(list.Items), len(podList.Items), nil
}

// deleteRayClusters deletes the RayClusters of ns on the hub when the test
// ends and waits until no member has any of them or their pods: Shepherd
// deletes its copies, and the members' garbage collectors the pods their
// simulated Ray operators made.
func deleteRayClusters(t *testing.T, ns string) {
	t.Cleanup(func() {
		ctx := context.Background()
		rc := &unstructured.Unstructured{}
		rc.SetGroupVersionKind(rayClusterKind)
		if err := hub.DeleteAllOf(ctx, rc, client.InNamespace(ns)); err != nil {
			t.Errorf("deleting the RayClusters of %s: %v", ns, err)
			return
		}
		fleetenv.Eventually(t, "no member runs anything of "+ns, func() error {
			for member := range memberCl {
				if rcs, pods, err := rayObjects(ctx, member, ns); err != nil || rcs+pods > 0 {
					return fmt.Errorf("%s: %d RayClusters and %d pods of %s (%v)", member, rcs, pods, ns, err)
				}
			}
			return nil
		})
	})
}

// waitFleetEmpty waits until the hub holds no ResourceBinding (a deleted
// one is in flight until it is gone) and sees every member run nothing:
// no requests allocated or allocating in any Cluster's status. The
// scheduler then has the clusters' room whole, whatever an earlier test
// ran.
func waitFleetEmpty(t *testing.T) {
	t.Helper()
	fleetenv.Eventually(t, "the hub sees the fleet empty", func() error {
		ctx := context.Background()
		var bindings workv1alpha1.ResourceBindingList
		if err := hub.List(ctx, &bindings); err != nil {
			return err
		}
		if len(bindings.Items) > 0 {
			return fmt.Errorf("%d bindings left, %s/%s among them", len(bindings.Items), bindings.Items[0].Namespace, bindings.Items[0].Name)
		}
		var clusters clusterv1alpha1.ClusterList
		if err := hub.List(ctx, &clusters); err != nil {
			return err
		}
		for _, c := range clusters.Items {
			s := c.Status.ResourceSummary
			if s == nil {
				return fmt.Errorf("%s reports no resources", c.Name)
			}
			if !s.Allocated.Cpu().IsZero() || !s.Allocating.Cpu().IsZero() {
				return fmt.Errorf("%s reports cpu %s allocated, %s allocating", c.Name, s.Allocated.Cpu(), s.Allocating.Cpu())
			}
		}
		return nil
	})
}
