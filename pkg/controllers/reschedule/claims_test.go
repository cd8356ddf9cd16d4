package reschedule_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// governedBy waits until the binding of Deployment name follows policy
// and its spec.resource is the template's current resourceVersion (so the
// detector saw the template's last edit).
func governedBy(t *testing.T, ns, name, policy string) *workv1alpha1.ResourceBinding {
	t.Helper()
	var b *workv1alpha1.ResourceBinding
	eventually(t, name+" governed by "+policy, func() error {
		var err error
		if b, err = getRB(ns, name+"-deployment"); err != nil {
			return err
		}
		if b.Spec.PolicyRef == nil || b.Spec.PolicyRef.Name != policy {
			return fmt.Errorf("policyRef %+v", b.Spec.PolicyRef)
		}
		return nil
	})
	return b
}

// TestPolicyClaimsAndPreemption: a template stays with the policy that
// claimed it when a better policy appears without preemption; a policy
// with preemption Always and a higher priority takes it over, with an event
// on the template.
func TestPolicyClaimsAndPreemption(t *testing.T) {
	suite.Hub(t)
	const ns = "claims"
	namespace(t, ns)
	apply(t, policyYAML(ns, "old", dividedOver("c1"))+"---\n"+deploymentYAML(ns, "web", 2, "nginx:1"))
	governedBy(t, ns, "web", "old")

	// A more specific policy of higher priority, without preemption.
	newer := strings.Replace(policyYAML(ns, "new", dividedOver("c2"), "web"), "spec:\n", "spec:\n  priority: 5\n", 1)
	apply(t, newer)
	// Edit the template so the detector looks at it again, and wait until
	// the binding reflects that edit: the claim held.
	apply(t, deploymentYAML(ns, "web", 2, "nginx:2"))
	eventually(t, "the binding follows the template edit", func() error {
		b, err := getRB(ns, "web-deployment")
		if err != nil {
			return err
		}
		tmpl := &appsv1.Deployment{}
		if err := cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, tmpl); err != nil {
			return err
		}
		if b.Spec.Resource.ResourceVersion != tmpl.GetResourceVersion() {
			return fmt.Errorf("binding at %s, template at %s", b.Spec.Resource.ResourceVersion, tmpl.GetResourceVersion())
		}
		if b.Spec.PolicyRef == nil || b.Spec.PolicyRef.Name != "old" {
			return fmt.Errorf("a policy without preemption took the template: %+v", b.Spec.PolicyRef)
		}
		return nil
	})

	// The same policy with preemption: Always takes it over.
	apply(t, strings.Replace(newer, "spec:\n", "spec:\n  preemption: Always\n", 1))
	governedBy(t, ns, "web", "new")
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c2": 2}))
	eventually(t, "PreemptPolicySucceed event on the template", func() error {
		e, err := eventAbout("web", "PreemptPolicySucceed")
		if err != nil {
			return err
		}
		if !strings.Contains(e.Note, "took this template over from PropagationPolicy claims/old") {
			return fmt.Errorf("note %q", e.Note)
		}
		return nil
	})
}

// TestSchedulePriorityFromPriorityClass: a policy's schedulePriority is
// resolved to the PriorityClass value on the binding; while the class does
// not exist the binding is not written and the template says why.
func TestSchedulePriorityFromPriorityClass(t *testing.T) {
	suite.Hub(t)
	const ns = "sched-priority"
	namespace(t, ns)
	policy := strings.Replace(policyYAML(ns, "urgent", dividedOver("c1")), "spec:\n",
		"spec:\n  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: shepherd-test-urgent}\n", 1)
	apply(t, policy+"---\n"+deploymentYAML(ns, "api", 1, "nginx:1"))
	eventually(t, "the template reports the missing PriorityClass", func() error {
		e, err := eventAbout("api", "ApplyPolicyFailed")
		if err != nil {
			return err
		}
		if !strings.Contains(e.Note, `spec.schedulePriority.priorityClassName: PriorityClass "shepherd-test-urgent" not found`) {
			return fmt.Errorf("note %q", e.Note)
		}
		return nil
	})
	if _, err := getRB(ns, "api-deployment"); err == nil {
		t.Fatal("the binding was written without its priority")
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "shepherd-test-urgent"}, Value: 100000}
	if err := cli.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Delete(context.Background(), pc) })
	b := waitScheduled(t, ns, "api-deployment", targetsAre(map[string]int32{"c1": 1}))
	if workv1alpha1.PriorityOf(&b.Spec) != 100000 {
		t.Errorf("spec.schedulePriority %+v, want 100000", b.Spec.SchedulePriority)
	}
}

// TestDependentOverridesHoldThePolicyBack: a policy naming an
// OverridePolicy in spec.dependentOverrides propagates nothing until that
// OverridePolicy exists; the template says what it waits for.
func TestDependentOverridesHoldThePolicyBack(t *testing.T) {
	suite.Hub(t)
	const ns = "dependent-overrides"
	namespace(t, ns)
	policy := strings.Replace(policyYAML(ns, "waits", dividedOver("c1")), "spec:\n", "spec:\n  dependentOverrides: [web-images]\n", 1)
	apply(t, policy+"---\n"+deploymentYAML(ns, "web", 1, "nginx:1"))
	eventually(t, "the template says what the policy waits for", func() error {
		e, err := eventAbout("web", "ApplyPolicyFailed")
		if err != nil {
			return err
		}
		if !strings.Contains(e.Note, "spec.dependentOverrides: web-images not found") {
			return fmt.Errorf("note %q", e.Note)
		}
		return nil
	})
	if _, err := getRB(ns, "web-deployment"); err == nil {
		t.Fatal("the binding was written before its dependent override existed")
	}
	apply(t, fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-images, namespace: %s}
spec:
  overrideRules:
  - overriders:
      labelsOverrider:
      - {operator: add, value: {rendered: "yes"}}
`, ns))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 1}))
}
