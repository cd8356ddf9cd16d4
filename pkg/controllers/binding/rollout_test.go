package binding_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// rolloutPolicyYAML duplicates "web" over clusters with the given rollout.
func rolloutPolicyYAML(ns, rollout string, clusters ...string) string {
	return fmt.Sprintf(`
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: %v}
  rollout: %s
`, ns, "["+strings.Join(clusters, ", ")+"]", rollout)
}

// imageOf reads the first container's image of a Work's Deployment.
func imageOf(w *workv1alpha1.Work) string {
	m, err := manifestOf(w)
	if err != nil {
		return ""
	}
	cs, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

// images returns each cluster's image.
func images(t *testing.T, ref names.BindingRef) map[string]string {
	t.Helper()
	ws, err := works(ref)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for c, w := range ws {
		out[c] = imageOf(w)
	}
	return out
}

// waitImages waits until the clusters' Works hold exactly want.
func waitImages(t *testing.T, ref names.BindingRef, want map[string]string) {
	t.Helper()
	eventually(t, fmt.Sprintf("images %v", want), func() error {
		ws, err := works(ref)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for c, w := range ws {
			got[c] = imageOf(w)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("images %v", got)
		}
		return nil
	})
}

// markHealth plays the execution and work status controllers: the Work's
// current spec was applied and its Deployment has the given health.
func markHealth(t *testing.T, ref names.BindingRef, cluster string, health policyv1alpha1.ResourceHealth) {
	t.Helper()
	eventually(t, fmt.Sprintf("marking %s %s", cluster, health), func() error {
		ws, err := works(ref)
		if err != nil {
			return err
		}
		cur := ws[cluster]
		if cur == nil {
			return fmt.Errorf("no Work on %s", cluster)
		}
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{
			Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue,
			Reason: "Applied", Message: "applied by the test", ObservedGeneration: cur.Generation,
		})
		cur.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
			Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ref.Namespace, Name: "web"},
			Health:     health,
		}}
		return cli.Status().Update(context.Background(), cur)
	})
}

// waitRollout waits until the binding's rollout status passes check.
func waitRollout(t *testing.T, ns string, check func(*workv1alpha1.RolloutStatus) error) *workv1alpha1.ResourceBinding {
	t.Helper()
	var b *workv1alpha1.ResourceBinding
	eventually(t, "rollout status", func() error {
		var err error
		if b, err = getRB(ns, names.BindingName("Deployment", "web")); err != nil {
			return err
		}
		if b.Status.Rollout == nil {
			return fmt.Errorf("no rollout status")
		}
		return check(b.Status.Rollout)
	})
	return b
}

func phase(p workv1alpha1.RolloutPhase) func(*workv1alpha1.RolloutStatus) error {
	return func(s *workv1alpha1.RolloutStatus) error {
		if s.Phase != p {
			return fmt.Errorf("phase %s (%s), want %s", s.Phase, s.Message, p)
		}
		return nil
	}
}

// holdFor fails when the clusters' images change from want within d.
func holdFor(t *testing.T, ref names.BindingRef, want map[string]string, d time.Duration) {
	t.Helper()
	watchImages(t, ref, d, func(got map[string]string) error {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("images became %v, want %v to hold", got, want)
		}
		return nil
	})
}

// TestProgressiveRollout: one cluster at a time, each healthy for
// minSuccessSeconds before the next; a controller restart mid-rollout
// carries on where it was; a cluster past its deadline stops the rollout
// and gets the last good revision back while the others never leave it.
func TestProgressiveRollout(t *testing.T) {
	suite.Hub(t)
	const ns = "rollout-progressive"
	namespace(t, ns)
	ref := rbRef(ns, names.BindingName("Deployment", "web"))
	all := []string{"c1", "c2", "c3"}
	apply(t, deploymentYAML(ns, 1, "web:v1"))
	apply(t, rolloutPolicyYAML(ns, "{type: Progressive, maxConcurrency: 1, minSuccessSeconds: 2, progressDeadlineSeconds: 8, rollbackOnFailure: true}", all...))

	// The first revision goes everywhere at once.
	waitImages(t, ref, map[string]string{"c1": "web:v1", "c2": "web:v1", "c3": "web:v1"})
	for _, c := range all {
		markHealth(t, ref, c, policyv1alpha1.ResourceHealthy)
	}
	first := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseComplete)).Status.Rollout
	if first.LastGoodRevision != first.Revision {
		t.Fatalf("complete, yet the last good revision is %q, not %q", first.LastGoodRevision, first.Revision)
	}

	apply(t, deploymentYAML(ns, 1, "web:v2"))
	waitImages(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v1", "c3": "web:v1"})
	holdFor(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v1", "c3": "web:v1"}, 2*time.Second)

	// A restart mid-rollout: nothing starts over.
	before := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseProgressing)).Status.Rollout
	restartControllers(t)
	holdFor(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v1", "c3": "web:v1"}, 2*time.Second)
	after := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseProgressing)).Status.Rollout
	if !after.StartedAt.Equal(before.StartedAt) || !after.Clusters[0].UpdatedAt.Equal(before.Clusters[0].UpdatedAt) {
		t.Fatalf("the restart started over: started %v then %v, c1 updated %v then %v", before.StartedAt, after.StartedAt, before.Clusters[0].UpdatedAt, after.Clusters[0].UpdatedAt)
	}

	// c1 healthy: after minSuccessSeconds c2 goes, c3 still waits.
	markHealth(t, ref, "c1", policyv1alpha1.ResourceHealthy)
	waitImages(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v2", "c3": "web:v1"})
	markHealth(t, ref, "c2", policyv1alpha1.ResourceHealthy)
	waitImages(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v2", "c3": "web:v2"})
	markHealth(t, ref, "c3", policyv1alpha1.ResourceHealthy)
	good := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseComplete)).Status.Rollout
	if good.LastGoodRevision == first.LastGoodRevision || len(good.History) != 2 {
		t.Fatalf("after the second rollout: last good %s (first %s), history %v", good.LastGoodRevision, first.LastGoodRevision, good.History)
	}

	// A bad image: c1 never turns healthy, the rollout stops at its
	// deadline and puts v2 back; c2 and c3 never leave v2.
	apply(t, deploymentYAML(ns, 1, "web:bad"))
	waitImages(t, ref, map[string]string{"c1": "web:bad", "c2": "web:v2", "c3": "web:v2"})
	markHealth(t, ref, "c1", policyv1alpha1.ResourceUnhealthy)
	eventually(t, "c1 rolled back, the others untouched", func() error {
		got := images(t, ref)
		if got["c2"] != "web:v2" || got["c3"] != "web:v2" {
			t.Fatalf("a cluster behind the rollout left v2: %v", got)
		}
		if got["c1"] != "web:v2" {
			return fmt.Errorf("images %v", got)
		}
		return nil
	})
	b := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseFailed))
	if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionRolloutFailed); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("RolloutFailed condition: %+v", c)
	}
	if b.Status.Rollout.LastGoodRevision != good.LastGoodRevision {
		t.Fatalf("the failed rollout changed the last good revision to %s", b.Status.Rollout.LastGoodRevision)
	}
	holdFor(t, ref, map[string]string{"c1": "web:v2", "c2": "web:v2", "c3": "web:v2"}, 2*time.Second)
	eventually(t, "RolloutFailed event", func() error { _, err := eventFor(ns, ref.Name, "RolloutFailed"); return err })
}

// TestStagedRolloutWaitsForApproval: a stage with approval Before waits,
// also across a controller restart, until spec.rolloutControl approves it
// for the revision going out; the next stage follows once it is done.
func TestStagedRolloutWaitsForApproval(t *testing.T) {
	suite.Hub(t)
	const ns = "rollout-staged"
	namespace(t, ns)
	for name, ring := range map[string]string{"canary1": "canary", "prod1": "prod"} {
		if err := createCluster(context.Background(), name, map[string]string{"ring": ring}); err != nil {
			t.Fatal(err)
		}
	}
	ref := rbRef(ns, names.BindingName("Deployment", "web"))
	apply(t, deploymentYAML(ns, 1, "web:v1"))
	apply(t, rolloutPolicyYAML(ns, `{type: Staged, stages: [{name: canary, clusterSelector: {matchLabels: {ring: canary}}, approval: Before}, {name: prod, clusterSelector: {matchLabels: {ring: prod}}}]}`, "canary1", "prod1"))
	waitImages(t, ref, map[string]string{"canary1": "web:v1", "prod1": "web:v1"})
	markHealth(t, ref, "canary1", policyv1alpha1.ResourceHealthy)
	markHealth(t, ref, "prod1", policyv1alpha1.ResourceHealthy)
	waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseComplete))

	apply(t, deploymentYAML(ns, 1, "web:v2"))
	b := waitRollout(t, ns, func(s *workv1alpha1.RolloutStatus) error {
		if s.Revision == s.LastGoodRevision {
			return fmt.Errorf("still on revision %s", s.Revision)
		}
		return phase(workv1alpha1.RolloutPhaseWaiting)(s)
	})
	if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionRolloutProgressing); c == nil || c.Reason != "WaitingForApproval" {
		t.Fatalf("RolloutProgressing: %+v", c)
	}
	restartControllers(t)
	holdFor(t, ref, map[string]string{"canary1": "web:v1", "prod1": "web:v1"}, 2*time.Second)

	// What `shepherd rollout approve` does.
	stage, when, err := actions.ApproveRollout(context.Background(), cli, actions.BindingKey{Namespace: ns, Name: ref.Name}, "", "shepherd-cli")
	if err != nil || stage != "canary" || when != policyv1alpha1.ApprovalBefore {
		t.Fatalf("approving: %s %s %v", stage, when, err)
	}
	waitImages(t, ref, map[string]string{"canary1": "web:v2", "prod1": "web:v1"})
	markHealth(t, ref, "canary1", policyv1alpha1.ResourceHealthy)
	waitImages(t, ref, map[string]string{"canary1": "web:v2", "prod1": "web:v2"})
	markHealth(t, ref, "prod1", policyv1alpha1.ResourceHealthy)
	waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseComplete))
}

// TestFirstPlacementGoesAtOnce: a binding the scheduler cannot place yet
// waits with no revision marked good, and its first placement gets the
// first revision everywhere at once (the binding's controller often runs
// before the scheduler; a revision marked good by the empty placement
// made the first placement go one cluster at a time).
func TestFirstPlacementGoesAtOnce(t *testing.T) {
	suite.Hub(t)
	const ns = "rollout-first-placement"
	namespace(t, ns)
	ref := rbRef(ns, names.BindingName("Deployment", "web"))
	const strategy = "{type: Progressive, maxConcurrency: 1, minSuccessSeconds: 30}"
	apply(t, deploymentYAML(ns, 1, "web:v1"))
	apply(t, rolloutPolicyYAML(ns, strategy, "not-a-member"))
	waiting := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseWaiting)).Status.Rollout
	if waiting.LastGoodRevision != "" {
		t.Fatalf("nothing placed, yet revision %s is good", waiting.LastGoodRevision)
	}
	apply(t, rolloutPolicyYAML(ns, strategy, "c1", "c2", "c3"))
	waitImages(t, ref, map[string]string{"c1": "web:v1", "c2": "web:v1", "c3": "web:v1"})
}
