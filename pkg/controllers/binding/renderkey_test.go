package binding

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestRenderKey: a Work is rendered again exactly when something it is
// rendered from changes: the template's manifest, the Work's settings,
// what override policies read of the cluster, or an override policy.
// A cluster's status (written every few seconds) is not among them.
func TestRenderKey(t *testing.T) {
	ctx := context.Background()
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: "web-configmap"}
	spec := &workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web", UID: "u"}}
	cm := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "shop", "name": "web"}, "data": map[string]any{"k": v}}}
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"env": "prod"}}, Spec: clusterv1alpha1.ClusterSpec{Region: "eu"}}
	op := policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "o", UID: "op1", Generation: 1}}
	key := func(c *clusterv1alpha1.Cluster, m *unstructured.Unstructured, s *workv1alpha1.BindingSpec, ps *overridePolicies) string {
		t.Helper()
		r := &Reconciler[*workv1alpha1.ResourceBinding]{client: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(c).Build()}
		k, err := r.renderKey(ctx, desiredWork(ref, "m1", m, 1, s), "m1", ps)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	ops := &overridePolicies{namespaced: []policyv1alpha1.OverridePolicy{op}}
	base := key(cluster, cm("a"), spec, ops)

	probed := cluster.DeepCopy()
	probed.Status.LastProbeTime = &metav1.Time{}
	probed.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True"}}
	relabelled := cluster.DeepCopy()
	relabelled.Labels["env"] = "staging"
	moved := cluster.DeepCopy()
	moved.Spec.Region = "us"
	edited := op.DeepCopy()
	edited.Generation = 2
	preserve := spec.DeepCopy()
	preserve.PreserveResourcesOnDeletion = true
	for _, tc := range []struct {
		name string
		key  string
		same bool
	}{
		{"the same inputs", key(cluster, cm("a"), spec, ops), true},
		{"a new cluster status", key(probed, cm("a"), spec, ops), true},
		{"a template edit", key(cluster, cm("b"), spec, ops), false},
		{"a cluster label", key(relabelled, cm("a"), spec, ops), false},
		{"a cluster's region", key(moved, cm("a"), spec, ops), false},
		{"an override policy edit", key(cluster, cm("a"), spec, &overridePolicies{namespaced: []policyv1alpha1.OverridePolicy{*edited}}), false},
		{"an override policy gone", key(cluster, cm("a"), spec, &overridePolicies{}), false},
		{"a Work setting", key(cluster, cm("a"), preserve, ops), false},
	} {
		if got := tc.key == base; got != tc.same {
			t.Errorf("%s: same key %v, want %v", tc.name, got, tc.same)
		}
	}

	var f renderFailures
	f.Set("w", "k1")
	if !f.Failed("w", "k1") || f.Failed("w", "k2") || f.Failed("other", "k1") {
		t.Fatal("a failure is remembered for its Work and key only")
	}
	f.Set("w", "")
	if f.Failed("w", "k1") {
		t.Fatal("a success forgets the failure")
	}
}
