package reschedule_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// These tests check the rows of docs/stability.md that need no member
// cluster: what schedules a binding again and what does not.

// settle is how long a test waits for something that must not happen.
const settle = 1500 * time.Millisecond

// unchanged fails the test if the binding was scheduled again since
// before: targets, lastScheduledTime or the scheduling hash moved.
func unchanged(t *testing.T, what string, before *workv1alpha1.ResourceBinding) {
	t.Helper()
	time.Sleep(settle)
	now, err := getRB(before.Namespace, before.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(activeTargets(now), activeTargets(before)) ||
		!now.Status.LastScheduledTime.Equal(before.Status.LastScheduledTime) ||
		now.Annotations[workv1alpha1.AnnotationScheduledHash] != before.Annotations[workv1alpha1.AnnotationScheduledHash] {
		t.Errorf("%s rescheduled: targets %v -> %v, lastScheduledTime %v -> %v", what,
			before.Spec.Clusters, now.Spec.Clusters, before.Status.LastScheduledTime, now.Status.LastScheduledTime)
	}
}

// TestWhatDoesNotReschedule: a template edit changing neither replicas
// nor placement, a selected cluster turning NotReady, and its capacity
// changing leave the placement alone; replicas and placement changes
// schedule, a scale-up keeping the replicas where they are.
func TestWhatDoesNotReschedule(t *testing.T) {
	suite.Hub(t)
	const ns = "stability"
	namespace(t, ns)
	for _, c := range []string{"st-a", "st-b"} {
		if err := createCluster(context.Background(), c, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply(t, policyYAML(ns, "web", dividedOver("st-a", "st-b"))+"---"+deploymentYAML(ns, "web", 4, "nginx:1.27"))
	rb := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"st-a": 2, "st-b": 2}))

	apply(t, deploymentYAML(ns, "web", 4, "nginx:1.28"))
	unchanged(t, "an image edit", rb)

	updateCluster(t, "st-a", true, func(c *clusterv1alpha1.Cluster) {
		c.Status.Conditions[0].Status, c.Status.Conditions[0].Reason = metav1.ConditionFalse, "NotReady"
	})
	unchanged(t, "a selected cluster turning NotReady", rb)

	updateCluster(t, "st-b", true, func(c *clusterv1alpha1.Cluster) {
		c.Status.ResourceSummary.Allocatable[corev1.ResourceCPU] = resource.MustParse("1")
	})
	unchanged(t, "a selected cluster's capacity shrinking", rb)

	apply(t, deploymentYAML(ns, "web", 6, "nginx:1.28"))
	waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); sumOf(got) != 6 || got["st-a"] < 2 || got["st-b"] < 2 {
			return fmt.Errorf("targets %v, want 6 replicas without moving the 2+2", b.Spec.Clusters)
		}
		return nil
	})

	apply(t, policyYAML(ns, "web", dividedOver("st-b")))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"st-b": 6}))
}

// TestEverywherePlacementOnlyAdds: a placement taking every eligible
// cluster gains the clusters that become eligible (labelled, joined, a
// taint removed) and nothing else moves.
func TestEverywherePlacementOnlyAdds(t *testing.T) {
	suite.Hub(t)
	const ns = "everywhere"
	namespace(t, ns)
	edge := map[string]string{"tier": "st-edge"}
	if err := createCluster(context.Background(), "ev-1", edge); err != nil {
		t.Fatal(err)
	}
	if err := createCluster(context.Background(), "ev-2", nil); err != nil {
		t.Fatal(err)
	}
	taint := corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}
	if err := createCluster(context.Background(), "ev-4", edge, taint); err != nil {
		t.Fatal(err)
	}
	apply(t, policyYAML(ns, "web", "clusterAffinity: {labelSelector: {matchLabels: {tier: st-edge}}}\nreplicaScheduling: {replicaSchedulingType: Duplicated}")+
		"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	first := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"ev-1": 2}))
	keep := first.Spec.Clusters[0]

	steps := []struct {
		what string
		do   func()
		want map[string]int32
	}{
		{"a label change", func() {
			updateCluster(t, "ev-2", false, func(c *clusterv1alpha1.Cluster) { c.Labels = edge })
		}, map[string]int32{"ev-1": 2, "ev-2": 2}},
		{"a join", func() {
			if err := createCluster(context.Background(), "ev-3", edge); err != nil {
				t.Fatal(err)
			}
		}, map[string]int32{"ev-1": 2, "ev-2": 2, "ev-3": 2}},
		{"a taint removed", func() {
			updateCluster(t, "ev-4", false, func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = nil })
		}, map[string]int32{"ev-1": 2, "ev-2": 2, "ev-3": 2, "ev-4": 2}},
	}
	for _, s := range steps {
		s.do()
		rb := waitScheduled(t, ns, "web-deployment", targetsAre(s.want))
		for _, tc := range rb.Spec.Clusters {
			if tc.Name == keep.Name && !equality.Semantic.DeepEqual(tc, keep) {
				t.Errorf("%s changed the existing target %+v -> %+v", s.what, keep, tc)
			}
		}
	}
}

// TestBestNRaiseAndLower: raising N of a "best N" placement only adds
// clusters; lowering it removes the lowest-scored first.
func TestBestNRaiseAndLower(t *testing.T) {
	suite.Hub(t)
	const ns = "best-n"
	namespace(t, ns)
	weights := map[string]int{"bn-1": 100, "bn-2": 60, "bn-3": 30, "bn-4": 10}
	for c := range weights {
		if err := createCluster(context.Background(), c, map[string]string{"best-n": c}); err != nil {
			t.Fatal(err)
		}
	}
	placement := func(n int) string {
		var prefs []string
		for _, c := range []string{"bn-1", "bn-2", "bn-3", "bn-4"} {
			prefs = append(prefs, fmt.Sprintf("- {weight: %d, preference: {labelSelector: {matchLabels: {best-n: %s}}}}", weights[c], c))
		}
		return fmt.Sprintf("clusterAffinity: {labelSelector: {matchExpressions: [{key: best-n, operator: Exists}]}}\npreferredClusterAffinities:\n%s\nspreadConstraints: [{spreadByField: cluster, minGroups: %d, maxGroups: %d}]\nreplicaScheduling: {replicaSchedulingType: Duplicated}",
			strings.Join(prefs, "\n"), n, n)
	}
	apply(t, policyYAML(ns, "web", placement(2))+"---"+deploymentYAML(ns, "web", 1, "nginx:1.27"))
	two := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"bn-1": 1, "bn-2": 1}))

	// bn-4 becomes the most preferred cluster: a bounded placement does
	// not follow (nothing moves), but it is the one a raise adds.
	updateCluster(t, "bn-4", false, func(c *clusterv1alpha1.Cluster) { c.Labels["best-n"] = "bn-1" })
	unchanged(t, "a better cluster appearing", two)

	apply(t, policyYAML(ns, "web", placement(3)))
	three := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		got := activeTargets(b)
		if len(got) != 3 || got["bn-1"] != 1 || got["bn-2"] != 1 {
			return fmt.Errorf("targets %v, want bn-1 and bn-2 kept and one added", b.Spec.Clusters)
		}
		return nil
	})
	apply(t, policyYAML(ns, "web", placement(2)))
	lowered := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); len(got) != 2 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		// The targets and the decisions are written by two patches: wait
		// for the decisions of the lowering cycle, not the raise's.
		selected := 0
		for _, d := range b.Status.SchedulingDecisions {
			if d.Selected {
				selected++
			}
		}
		if selected != 2 {
			return fmt.Errorf("decisions still from an earlier cycle: %+v", b.Status.SchedulingDecisions)
		}
		return nil
	})
	// The lowering cycle scored the three clusters alike (all held):
	// the one it dropped scored lowest.
	scores := map[string]int64{}
	for _, d := range lowered.Status.SchedulingDecisions {
		scores[d.ClusterName] = d.TotalScore
	}
	kept := activeTargets(lowered)
	for c := range activeTargets(three) {
		if _, ok := kept[c]; ok {
			continue
		}
		if _, ok := scores[c]; !ok {
			t.Fatalf("no decision for the dropped %s: %+v", c, lowered.Status.SchedulingDecisions)
		}
		for k := range kept {
			if scores[c] > scores[k] {
				t.Errorf("lowering N removed %s (score %d) before %s (score %d); scores %v", c, scores[c], k, scores[k], scores)
			}
		}
	}
}

// TestUnscheduledUntilWorkGone: a target leaving the placement stays
// Unscheduled while its Work exists (here held by a finalizer, as the
// execution controller holds it until the member's objects are deleted),
// then disappears.
func TestUnscheduledUntilWorkGone(t *testing.T) {
	suite.Hub(t)
	const ns = "unscheduled"
	const hold = "test.shepherd.io/hold"
	namespace(t, ns)
	apply(t, policyYAML(ns, "web", dividedOver("c1", "c2"))+"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 1, "c2": 1}))
	key := client.ObjectKey{Namespace: names.ExecutionNamespace("c2"), Name: names.WorkName(ns, "web-deployment")}
	eventually(t, "holding the Work on c2", func() error {
		w := &workv1alpha1.Work{}
		if err := cli.Get(context.Background(), key, w); err != nil {
			return err
		}
		controllerutil.AddFinalizer(w, hold)
		return cli.Update(context.Background(), w)
	})

	apply(t, policyYAML(ns, "web", dividedOver("c1")))
	rb := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 2}))
	time.Sleep(settle)
	if rb, _ = getRB(ns, rb.Name); !maps.Equal(states(rb), map[string]workv1alpha1.TargetState{"c1": workv1alpha1.TargetScheduled, "c2": workv1alpha1.TargetUnscheduled}) {
		t.Fatalf("targets %v, want c2 Unscheduled while its Work exists", rb.Spec.Clusters)
	}
	eventually(t, "releasing the Work on c2", func() error {
		w := &workv1alpha1.Work{}
		if err := cli.Get(context.Background(), key, w); err != nil {
			return err
		}
		controllerutil.RemoveFinalizer(w, hold)
		return cli.Update(context.Background(), w)
	})
	eventually(t, "the Unscheduled target gone", func() error {
		b, err := getRB(ns, rb.Name)
		if err != nil {
			return err
		}
		if len(b.Spec.Clusters) != 1 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
}

func states(b *workv1alpha1.ResourceBinding) map[string]workv1alpha1.TargetState {
	out := map[string]workv1alpha1.TargetState{}
	for _, t := range b.Spec.Clusters {
		out[t.Name] = t.State
	}
	return out
}
