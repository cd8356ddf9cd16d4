package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

func deploymentTemplate(replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"namespace": "ns", "name": "web", "uid": "u1", "resourceVersion": "7"},
		"spec": map[string]any{
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}},
			}}},
		},
	}}
	return u
}

func dividedPolicy() *policyv1alpha1.PropagationPolicy {
	p := pp("ns", "divided", 0, sel("web", nil)).(*policyv1alpha1.PropagationPolicy)
	p.Spec.Placement = policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a", "b"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided},
	}
	p.Spec.SchedulerName = "default-scheduler"
	return p
}

func TestDesiredBinding(t *testing.T) {
	p := dividedPolicy()
	b, err := desiredBinding(interpreter.New(), deploymentTemplate(6), true, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, ok := b.(*workv1alpha1.ResourceBinding)
	if !ok {
		t.Fatalf("a namespaced template got a %T", b)
	}
	if rb.Name != "web-deployment" || rb.Namespace != "ns" {
		t.Errorf("binding %s/%s", rb.Namespace, rb.Name)
	}
	want := workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "7"}
	if rb.Spec.Resource != want {
		t.Errorf("resource = %+v", rb.Spec.Resource)
	}
	if rb.Spec.Replicas != 6 || rb.Spec.ReplicaRequirements == nil || rb.Spec.ReplicaRequirements.ResourceRequest.Cpu().MilliValue() != 100 {
		t.Errorf("replicas %d, requirements %+v", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}
	if rb.Spec.PolicyRef == nil || *rb.Spec.PolicyRef != (workv1alpha1.PolicyReference{Kind: KindPropagationPolicy, Namespace: "ns", Name: "divided"}) {
		t.Errorf("policyRef = %+v", rb.Spec.PolicyRef)
	}
	if rb.Labels[workv1alpha1.LabelPolicyName] != "divided" || rb.Labels[workv1alpha1.LabelPolicyNamespace] != "ns" {
		t.Errorf("labels = %v", rb.Labels)
	}
	if len(rb.OwnerReferences) != 1 || rb.OwnerReferences[0].UID != types.UID("u1") {
		t.Errorf("ownerReferences = %+v", rb.OwnerReferences)
	}
	// The placement is a copy: editing the policy afterwards must not
	// change a binding built before.
	p.Spec.Placement.ClusterAffinity.ClusterNames[0] = "changed"
	if rb.Spec.Placement.ClusterAffinity.ClusterNames[0] != "a" {
		t.Error("the binding's placement aliases the policy's")
	}
}

func TestDesiredClusterBinding(t *testing.T) {
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "reader", "uid": "u2"},
	}}
	b, err := desiredBinding(interpreter.New(), role, false, cpp("roles", 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	crb, ok := b.(*workv1alpha1.ClusterResourceBinding)
	if !ok {
		t.Fatalf("a cluster-scoped template got a %T", b)
	}
	if crb.Name != "reader-clusterrole" || crb.Spec.Replicas != 0 || crb.Spec.ReplicaRequirements != nil {
		t.Errorf("binding %+v", crb)
	}
	if _, ok := crb.Labels[workv1alpha1.LabelPolicyNamespace]; ok {
		t.Errorf("cluster policy labels carry a namespace: %v", crb.Labels)
	}
}

func TestOwnedFieldsEqual(t *testing.T) {
	desired, err := desiredBinding(interpreter.New(), deploymentTemplate(6), true, dividedPolicy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(b *workv1alpha1.ResourceBinding)
		equal  bool
	}{
		{name: "identical", mutate: func(*workv1alpha1.ResourceBinding) {}, equal: true},
		{name: "other controllers' fields differ", equal: true, mutate: func(b *workv1alpha1.ResourceBinding) {
			b.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "a", Replicas: 6}}
			b.Spec.RescheduleTriggeredAt = &metav1.Time{}
			b.Status.ObservedAffinityName = "x"
			b.Labels["other"] = "label"
			b.Finalizers = []string{workv1alpha1.FinalizerBinding}
		}},
		{name: "replicas", mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.Replicas = 5 }},
		{name: "resource version", mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.Resource.ResourceVersion = "8" }},
		{name: "placement", mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.Placement.ClusterAffinity = nil }},
		{name: "policy label", mutate: func(b *workv1alpha1.ResourceBinding) { delete(b.Labels, workv1alpha1.LabelPolicyNamespace) }},
		{name: "owner", mutate: func(b *workv1alpha1.ResourceBinding) { b.OwnerReferences = nil }},
	}
	for _, tt := range tests {
		existing := desired.DeepCopyObject().(*workv1alpha1.ResourceBinding)
		tt.mutate(existing)
		if got := ownedFieldsEqual(existing, desired); got != tt.equal {
			t.Errorf("%s: ownedFieldsEqual = %v, want %v", tt.name, got, tt.equal)
		}
	}
}

// templateEdit is a template as it was when its binding was written, and
// as it is now.
type templateEdit struct {
	name     string
	was, now *unstructured.Unstructured
	// follow: the binding must be written again for now.
	follow bool
}

// templateEdits are the edits of a template both the apply of a claimed
// binding and the follow of an unclaimed one tell apart: for a template
// with a generation, a write of the template's status (a new
// resourceVersion alone) needs no write; a new generation, label or
// annotation does. For a template without a generation, any new
// resourceVersion is a change.
func templateEdits() []templateEdit {
	withGeneration := func(mutate func(*unstructured.Unstructured)) *unstructured.Unstructured {
		u := deploymentTemplate(6)
		u.SetGeneration(3)
		u.SetLabels(map[string]string{"app": "web", "tier": "front"})
		u.SetAnnotations(map[string]string{"note": "x"})
		mutate(u)
		return u
	}
	was := withGeneration(func(*unstructured.Unstructured) {})
	cm := func(rv string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "ns", "name": "c", "uid": "u3", "resourceVersion": rv}}}
	}
	return []templateEdit{
		{"unchanged", was, withGeneration(func(*unstructured.Unstructured) {}), false},
		{"status written: a new resourceVersion alone", was, withGeneration(func(u *unstructured.Unstructured) { u.SetResourceVersion("9") }), false},
		{"labels in another order", was, withGeneration(func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"tier": "front", "app": "web"})
			u.SetResourceVersion("9")
		}), false},
		{"a new generation", was, withGeneration(func(u *unstructured.Unstructured) { u.SetGeneration(4); u.SetResourceVersion("9") }), true},
		{"a label changed", was, withGeneration(func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", "tier": "back"})
			u.SetResourceVersion("9")
		}), true},
		{"an annotation added", was, withGeneration(func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"note": "x", "more": ""})
			u.SetResourceVersion("9")
		}), true},
		{"a label moved to the annotations", was, withGeneration(func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web"})
			u.SetAnnotations(map[string]string{"note": "x", "tier": "front"})
			u.SetResourceVersion("9")
		}), true},
		{"a ConfigMap unchanged", cm("7"), cm("7"), false},
		{"a ConfigMap's new resourceVersion", cm("7"), cm("8"), true},
	}
}

// TestTemplateStatusWritesAreNotFollowed: a claimed binding is applied
// again only for the edits of its template that change what its Works
// carry (templateEdits), and for another template of the same name.
func TestTemplateStatusWritesAreNotFollowed(t *testing.T) {
	edits := templateEdits()
	edits = append(edits, templateEdit{"another template of the name", edits[0].was, func() *unstructured.Unstructured {
		u := edits[0].was.DeepCopy()
		u.SetUID("u2")
		return u
	}(), true})
	for _, tc := range edits {
		t.Run(tc.name, func(t *testing.T) {
			written, err := desiredBinding(interpreter.New(), tc.was, true, dividedPolicy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			desired, err := desiredBinding(interpreter.New(), tc.now, true, dividedPolicy(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := !ownedFieldsEqual(written, desired); got != tc.follow {
				t.Errorf("binding written again = %v, want %v", got, tc.follow)
			}
		})
	}
}

func TestApplyObject(t *testing.T) {
	desired, err := desiredBinding(interpreter.New(), deploymentTemplate(6), true, dividedPolicy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := applyObject(desired)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "work.shepherd.io/v1alpha1" || u.GetKind() != workv1alpha1.KindResourceBinding {
		t.Errorf("apply object is a %s %s", u.GetAPIVersion(), u.GetKind())
	}
	for _, path := range [][]string{{"status"}, {"metadata", "creationTimestamp"}, {"spec", "clusters"}, {"spec", "rescheduleTriggeredAt"}, {"spec", "gracefulEvictionTasks"}, {"spec", "evictionHistory"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); found {
			t.Errorf("apply object holds %v, which the detector does not own", path)
		}
	}
}
