package binding_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// refuseFailedStatusYAML is a ValidatingAdmissionPolicy the hub enforces:
// it refuses every status write of the namespace's ResourceBindings that
// records a Failed rollout. It stands for a controller that stops (or
// loses the race for the binding) between its decision to roll back and
// the status write recording it.
func refuseFailedStatusYAML(ns string) string {
	return fmt.Sprintf(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [%[2]s]
      apiVersions: ["*"]
      operations: [UPDATE]
      resources: [resourcebindings/status]
  validations:
  - expression: "!has(object.status) || !has(object.status.rollout) || !has(object.status.rollout.phase) || object.status.rollout.phase != 'Failed'"
    message: the test refuses to record a Failed rollout
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[1]s}}
`, ns, workv1alpha1.GroupName)
}

// waitRefused waits until the hub refuses to record a Failed rollout for
// the binding (the admission policy is in force); the probe is a dry run.
func waitRefused(t *testing.T, ns string) {
	t.Helper()
	eventually(t, "the hub refusing a Failed rollout status", func() error {
		b, err := getRB(ns, names.BindingName("Deployment", "web"))
		if err != nil {
			return err
		}
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"rollout":{"phase":"Failed"}}}`))
		err = cli.Status().Patch(context.Background(), b, patch, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "the test refuses") {
			return fmt.Errorf("a Failed rollout status is not refused yet: %v", err)
		}
		return nil
	})
}

// watchImages polls the clusters' images for d and fails the test as
// soon as check refuses what it sees.
func watchImages(t *testing.T, ref names.BindingRef, d time.Duration, check func(got map[string]string) error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := check(images(t, ref)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRollbackSurvivesARestart: a bad image fails on the first cluster
// and is rolled back; the controllers stop between deciding the rollback
// and recording it (the hub refuses the status write), and start again.
// The failed revision is never sent again to the cluster it was taken
// from, the clusters the rollout did not reach never leave the last good
// revision, and once the rollout is recorded as failed a restart keeps it
// stopped.
func TestRollbackSurvivesARestart(t *testing.T) {
	suite.Hub(t)
	const ns = "rollout-rollback-restart"
	namespace(t, ns)
	ref := rbRef(ns, names.BindingName("Deployment", "web"))
	all := []string{"c1", "c2", "c3"}
	apply(t, deploymentYAML(ns, 1, "web:v1"))
	apply(t, rolloutPolicyYAML(ns, "{type: Progressive, maxConcurrency: 1, minSuccessSeconds: 1, progressDeadlineSeconds: 3, rollbackOnFailure: true}", all...))
	waitImages(t, ref, map[string]string{"c1": "web:v1", "c2": "web:v1", "c3": "web:v1"})
	for _, c := range all {
		markHealth(t, ref, c, policyv1alpha1.ResourceHealthy)
	}
	good := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseComplete)).Status.Rollout

	apply(t, refuseFailedStatusYAML(ns))
	refusal := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	t.Cleanup(func() {
		remove(t, refusal)
		remove(t, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	waitRefused(t, ns)

	apply(t, deploymentYAML(ns, 1, "web:bad"))
	waitImages(t, ref, map[string]string{"c1": "web:bad", "c2": "web:v1", "c3": "web:v1"})
	markHealth(t, ref, "c1", policyv1alpha1.ResourceUnhealthy)

	// Past c1's deadline the rollout fails; while the failure cannot be
	// recorded, and across a restart, web:bad never comes back to c1 once
	// it left, and never reaches c2 or c3.
	left := false
	unsafe := func(got map[string]string) error {
		if got["c2"] != "web:v1" || got["c3"] != "web:v1" {
			return fmt.Errorf("a cluster the rollout did not reach left the last good revision: %v", got)
		}
		switch {
		case got["c1"] != "web:bad":
			left = true
		case left:
			return fmt.Errorf("the failed revision was sent to c1 again after its rollback: %v", got)
		}
		return nil
	}
	watchImages(t, ref, 6*time.Second, unsafe)
	restartControllers(t)
	watchImages(t, ref, 2*time.Second, unsafe)

	// The failure can be recorded again: c1 runs web:v1, the rollout
	// stays stopped, also across another restart.
	remove(t, refusal)
	eventually(t, "c1 rolled back and the rollout failed", func() error {
		if err := unsafe(images(t, ref)); err != nil {
			t.Fatal(err)
		}
		if got := images(t, ref); got["c1"] != "web:v1" {
			return fmt.Errorf("images %v", got)
		}
		b, err := getRB(ns, ref.Name)
		if err != nil {
			return err
		}
		if s := b.Status.Rollout; s == nil || s.Phase != workv1alpha1.RolloutPhaseFailed {
			return fmt.Errorf("rollout %+v", s)
		}
		return nil
	})
	restartControllers(t)
	holdFor(t, ref, map[string]string{"c1": "web:v1", "c2": "web:v1", "c3": "web:v1"}, 3*time.Second)
	b := waitRollout(t, ns, phase(workv1alpha1.RolloutPhaseFailed))
	if b.Status.Rollout.LastGoodRevision != good.LastGoodRevision {
		t.Fatalf("the failed rollout changed the last good revision from %s to %s", good.LastGoodRevision, b.Status.Rollout.LastGoodRevision)
	}
	if !b.Status.Rollout.Clusters[0].Failed {
		t.Fatalf("c1 is not recorded as failed: %+v", b.Status.Rollout.Clusters[0])
	}
}
