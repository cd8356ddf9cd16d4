package binding_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/detector"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// TestDividedDeployment follows a Deployment through the pipeline:
// binding, division over three clusters, one Work per target, Bound once
// applied, a steady scale-up, a placement change that moves it, and the
// cleanup when the template goes.
func TestDividedDeployment(t *testing.T) {
	suite.Hub(t)
	const ns = "divided"
	namespace(t, ns)
	apply(t, dividedPolicyYAML(ns, fleet...)+"---"+deploymentYAML(ns, 6, "nginx:1.27"))

	rb := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		if got := sum(activeTargets(b)); got != 6 || len(activeTargets(b)) != 3 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	if rb.Spec.Replicas != 6 || rb.Spec.ReplicaRequirements == nil ||
		rb.Spec.ReplicaRequirements.ResourceRequest.Cpu().MilliValue() != 100 ||
		rb.Spec.ReplicaRequirements.ResourceRequest.Memory().Value() != 64<<20 {
		t.Fatalf("binding replicas %d, requirements %+v", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}
	if rb.Spec.PolicyRef == nil || rb.Spec.PolicyRef.Name != "web" || rb.Labels[workv1alpha1.LabelPolicyName] != "web" {
		t.Fatalf("policy reference %+v, labels %v", rb.Spec.PolicyRef, rb.Labels)
	}
	if len(rb.Status.SchedulingDecisions) != 3 {
		t.Errorf("decisions %+v", rb.Status.SchedulingDecisions)
	}
	ref := rbRef(ns, rb.Name)
	first := activeTargets(rb)
	ws := waitWorks(t, ref, fleet, func(c string, m *unstructured.Unstructured) error {
		if got := replicasOf(m); got != int64(first[c]) {
			return fmt.Errorf("manifest has %d replicas, target %d", got, first[c])
		}
		if m.GetUID() != "" || m.GetResourceVersion() != "" || m.Object["status"] != nil {
			return fmt.Errorf("manifest keeps hub state: %v", m.Object["metadata"])
		}
		return nil
	})

	// No member answered yet: a first placement gets no Pending
	// condition (it would be one more binding write per workload).
	// (The reconcile that wrote the Works decides right after; a second
	// gives it ample time to write, were it going to.)
	for range 10 {
		if b, err := getRB(ns, rb.Name); err != nil {
			t.Fatal(err)
		} else if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionFullyApplied); c != nil {
			t.Fatalf("FullyApplied before any Work was applied: %+v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Play the execution controller, one Work first: the others pending.
	clusters := slices.Sorted(maps.Keys(ws))
	markApplied(t, ws[clusters[0]])
	eventually(t, "fully applied pending the other Works", func() error {
		b, err := getRB(ns, rb.Name)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionFullyApplied)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != binding.ReasonPending || !strings.Contains(c.Message, clusters[1]) {
			return fmt.Errorf("conditions %+v", b.Status.Conditions)
		}
		return nil
	})
	// Then the rest: targets become Bound, the binding FullyApplied.
	for _, c := range clusters[1:] {
		markApplied(t, ws[c])
	}
	eventually(t, "targets bound and fully applied", func() error {
		b, err := getRB(ns, rb.Name)
		if err != nil {
			return err
		}
		for _, tc := range b.Spec.Clusters {
			if tc.State != workv1alpha1.TargetBound {
				return fmt.Errorf("targets %v", b.Spec.Clusters)
			}
		}
		if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionFullyApplied) {
			return fmt.Errorf("conditions %+v", b.Status.Conditions)
		}
		return nil
	})

	// Scale up: the new replicas are added, none moves.
	apply(t, deploymentYAML(ns, 9, "nginx:1.27"))
	rb = waitScheduled(t, ns, rb.Name, func(b *workv1alpha1.ResourceBinding) error {
		if sum(activeTargets(b)) != 9 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	scaled := activeTargets(rb)
	for c, n := range first {
		if scaled[c] < n {
			t.Errorf("scale-up moved replicas: %v -> %v", first, scaled)
		}
	}
	waitWorks(t, ref, fleet, func(c string, m *unstructured.Unstructured) error {
		if got := replicasOf(m); got != int64(scaled[c]) {
			return fmt.Errorf("manifest has %d replicas, target %d", got, scaled[c])
		}
		return nil
	})

	// Move: the policy now allows c1 only.
	apply(t, dividedPolicyYAML(ns, "c1"))
	waitScheduled(t, ns, rb.Name, func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); !maps.Equal(got, map[string]int32{"c1": 9}) || len(b.Spec.Clusters) != 1 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	waitWorks(t, ref, []string{"c1"}, func(_ string, m *unstructured.Unstructured) error {
		if got := replicasOf(m); got != 9 {
			return fmt.Errorf("manifest has %d replicas", got)
		}
		return nil
	})

	// The template goes: so do the binding and its Works.
	remove(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})
	waitGone(t, rb)
	waitWorks(t, ref, nil, nil)
}

// TestUnschedulable: a placement no cluster satisfies says why, in the
// Scheduled condition and in an event.
func TestUnschedulable(t *testing.T) {
	suite.Hub(t)
	const ns = "unschedulable"
	namespace(t, ns)
	apply(t, dividedPolicyYAML(ns, "nowhere")+"---"+deploymentYAML(ns, 2, "nginx:1.27"))
	eventually(t, "unschedulable condition", func() error {
		b, err := getRB(ns, "web-deployment")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != scheduling.ReasonUnschedulable {
			return fmt.Errorf("condition %+v", c)
		}
		if !strings.Contains(c.Message, "clusters available") {
			return fmt.Errorf("message %q does not say why", c.Message)
		}
		if len(b.Spec.Clusters) != 0 {
			return fmt.Errorf("unschedulable binding has targets %v", b.Spec.Clusters)
		}
		return nil
	})
	eventually(t, "FailedScheduling event", func() error {
		_, err := eventFor(ns, "web-deployment", scheduling.EventFailedScheduling)
		return err
	})
	eventually(t, "ApplyPolicySucceed event on the template", func() error {
		_, err := eventFor(ns, "web", detector.ReasonApplyPolicySucceed)
		return err
	})
}

// TestDuplicatedConfigMap: a kind without replicas goes whole to every
// selected cluster.
func TestDuplicatedConfigMap(t *testing.T) {
	suite.Hub(t)
	const ns = "duplicated"
	namespace(t, ns)
	apply(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: duplicated}
data: {mode: fast}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: duplicated}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement: {clusterAffinity: {clusterNames: [c1, c2]}}
`)
	rb := waitScheduled(t, ns, "settings-configmap", func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); !maps.Equal(got, map[string]int32{"c1": 0, "c2": 0}) {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	if rb.Spec.Replicas != 0 || rb.Spec.ReplicaRequirements != nil {
		t.Fatalf("a ConfigMap got replicas %d, requirements %+v", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}
	waitWorks(t, rbRef(ns, rb.Name), []string{"c1", "c2"}, func(_ string, m *unstructured.Unstructured) error {
		if v, _, _ := unstructured.NestedString(m.Object, "data", "mode"); v != "fast" {
			return fmt.Errorf("manifest data %v", m.Object["data"])
		}
		return nil
	})
}

// TestClusterScopedTemplate runs the ClusterResourceBinding path: a
// ClusterRole under a ClusterPropagationPolicy, removed when the policy
// goes and no other policy matches.
func TestClusterScopedTemplate(t *testing.T) {
	suite.Hub(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "shepherd-test-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	if err := cli.Create(context.Background(), role); err != nil {
		t.Fatal(err)
	}
	policy := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"c3"}}},
		},
	}
	if err := cli.Create(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	crb := &workv1alpha1.ClusterResourceBinding{}
	name := names.BindingName("ClusterRole", role.Name)
	eventually(t, "cluster binding scheduled", func() error {
		if err := cli.Get(context.Background(), client.ObjectKey{Name: name}, crb); err != nil {
			return err
		}
		if got := activeTargets(crb); !maps.Equal(got, map[string]int32{"c3": 0}) {
			return fmt.Errorf("targets %v", crb.Spec.Clusters)
		}
		return nil
	})
	ref := names.BindingRef{Kind: workv1alpha1.KindClusterResourceBinding, Name: name}
	ws := waitWorks(t, ref, []string{"c3"}, func(_ string, m *unstructured.Unstructured) error {
		if m.GetKind() != "ClusterRole" || m.GetName() != role.Name {
			return fmt.Errorf("manifest %s %s", m.GetKind(), m.GetName())
		}
		return nil
	})
	if got := ws["c3"].Name; got != name {
		t.Errorf("Work name %q, want %q", got, name)
	}
	remove(t, role)
	waitGone(t, crb)
	waitWorks(t, ref, nil, nil)
	remove(t, policy)
}

// TestPolicyDeletionRematches: a template whose PropagationPolicy goes
// falls to a matching ClusterPropagationPolicy. When that goes too, the
// binding and its Works stay, unclaimed, with their placement; a new
// policy claims them back; deleting the template deletes them.
func TestPolicyDeletionRematches(t *testing.T) {
	suite.Hub(t)
	const ns = "rematch"
	namespace(t, ns)
	apply(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: rematch}
data: {k: v}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: local, namespace: rematch}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app}]
  placement: {clusterAffinity: {clusterNames: [c1]}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: rematch-fallback}
spec:
  priority: 100
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: rematch, name: app}]
  placement: {clusterAffinity: {clusterNames: [c2]}}
`)
	ref := rbRef(ns, "app-configmap")
	placedBy := func(kind string, cluster string) func(b *workv1alpha1.ResourceBinding) error {
		return func(b *workv1alpha1.ResourceBinding) error {
			if b.Spec.PolicyRef == nil || b.Spec.PolicyRef.Kind != kind {
				return fmt.Errorf("policy %+v", b.Spec.PolicyRef)
			}
			if got := activeTargets(b); !maps.Equal(got, map[string]int32{cluster: 0}) || len(b.Spec.Clusters) != 1 {
				return fmt.Errorf("targets %v", b.Spec.Clusters)
			}
			return nil
		}
	}
	waitScheduled(t, ns, ref.Name, placedBy(detector.KindPropagationPolicy, "c1"))
	waitWorks(t, ref, []string{"c1"}, func(string, *unstructured.Unstructured) error { return nil })

	remove(t, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}})
	rb := waitScheduled(t, ns, ref.Name, placedBy(detector.KindClusterPropagationPolicy, "c2"))
	waitWorks(t, ref, []string{"c2"}, func(string, *unstructured.Unstructured) error { return nil })

	remove(t, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "rematch-fallback"}})
	claimed := func(status metav1.ConditionStatus, reason string) func(b *workv1alpha1.ResourceBinding) error {
		return func(b *workv1alpha1.ResourceBinding) error {
			c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionClaimed)
			if c == nil || c.Status != status || c.Reason != reason {
				return fmt.Errorf("Claimed condition %+v", c)
			}
			return nil
		}
	}
	unclaimed := waitScheduled(t, ns, ref.Name, claimed(metav1.ConditionFalse, workv1alpha1.ReasonPolicyDeleted))
	if err := placedBy(detector.KindClusterPropagationPolicy, "c2")(unclaimed); err != nil {
		t.Errorf("the unclaimed binding lost its placement: %v", err)
	}
	eventually(t, "BindingUnclaimed event on the template", func() error {
		_, err := eventFor(ns, "app", detector.ReasonBindingUnclaimed)
		return err
	})
	// A template edit still reaches the cluster the binding is on.
	apply(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: rematch}
data: {k: edited}
`)
	waitWorks(t, ref, []string{"c2"}, func(_ string, m *unstructured.Unstructured) error {
		if v, _, _ := unstructured.NestedString(m.Object, "data", "k"); v != "edited" {
			return fmt.Errorf("data.k = %q", v)
		}
		return nil
	})
	if b, err := getRB(ns, ref.Name); err != nil || b.UID != rb.UID || !maps.Equal(activeTargets(b), map[string]int32{"c2": 0}) {
		t.Fatalf("the unclaimed binding changed: %v %+v", err, b)
	}

	// A new policy claims the template, and its placement applies.
	apply(t, `
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: again, namespace: rematch}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app}]
  placement: {clusterAffinity: {clusterNames: [c3]}}
`)
	again := waitScheduled(t, ns, ref.Name, claimed(metav1.ConditionTrue, workv1alpha1.ReasonPolicyClaimed))
	if again.UID != rb.UID {
		t.Errorf("the binding was replaced rather than claimed")
	}
	waitScheduled(t, ns, ref.Name, placedBy(detector.KindPropagationPolicy, "c3"))
	waitWorks(t, ref, []string{"c3"}, func(string, *unstructured.Unstructured) error { return nil })
	eventually(t, "BindingClaimed event on the template", func() error {
		_, err := eventFor(ns, "app", detector.ReasonBindingClaimed)
		return err
	})

	// Deleting the template still deletes the binding and its Works.
	remove(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}})
	waitGone(t, rb)
	waitWorks(t, ref, nil, nil)
	remove(t, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "again"}})
}
