package binding

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// TestCheckResource: a binding places only the template it is named for,
// in its own scope, by UID, and never one Shepherd excludes. Each case
// is a binding whose spec.resource was redirected by hand.
func TestCheckResource(t *testing.T) {
	cm := workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a", Name: "cfg", UID: "u1"}
	with := func(f func(*workv1alpha1.ObjectReference)) workv1alpha1.ObjectReference {
		r := cm
		f(&r)
		return r
	}
	ns := workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team-a", UID: "u2"}
	cases := []struct {
		name            string
		kind, namespace string
		binding         string
		res             workv1alpha1.ObjectReference
		err             string
	}{
		{name: "as the detector writes it", kind: workv1alpha1.KindResourceBinding, namespace: "team-a", binding: "cfg-configmap", res: cm},
		{name: "a cluster-scoped template", kind: workv1alpha1.KindClusterResourceBinding, binding: "team-a-namespace", res: ns},
		{name: "no UID", kind: workv1alpha1.KindResourceBinding, namespace: "team-a", binding: "cfg-configmap",
			res: with(func(r *workv1alpha1.ObjectReference) { r.UID = "" }), err: "spec.resource.uid is empty"},
		{name: "redirected at another kind (a ResourceQuota)", kind: workv1alpha1.KindResourceBinding, namespace: "team-a", binding: "cfg-configmap",
			res: with(func(r *workv1alpha1.ObjectReference) { r.Kind = "ResourceQuota"; r.Name = "quota" }), err: `whose binding is named "quota-resourcequota", not "cfg-configmap"`},
		{name: "redirected at another namespace's Secret", kind: workv1alpha1.KindResourceBinding, namespace: "team-a", binding: "cfg-configmap",
			res: with(func(r *workv1alpha1.ObjectReference) { r.Kind = "Secret"; r.Namespace = "team-b"; r.Name = "secret-b" }),
			err: `spec.resource.namespace is "team-b": a ResourceBinding places only a template of its own namespace "team-a"`},
		{name: "a ClusterResourceBinding redirected at the hub's credentials", kind: workv1alpha1.KindClusterResourceBinding, binding: "team-a-namespace",
			res: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "shepherd-system", Name: "member2", UID: "u3"},
			err: `spec.resource.namespace is "shepherd-system": a ClusterResourceBinding places only a cluster-scoped template`},
		{name: "a binding named for an excluded template", kind: workv1alpha1.KindResourceBinding, namespace: "shepherd-system", binding: "member2-secret",
			res: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "shepherd-system", Name: "member2", UID: "u3"},
			err: "which Shepherd never propagates"},
		{name: "Shepherd's own kind", kind: workv1alpha1.KindClusterResourceBinding, binding: "c-cluster",
			res: workv1alpha1.ObjectReference{APIVersion: "cluster.shepherd.io/v1alpha1", Kind: "Cluster", Name: "c", UID: "u4"},
			err: "which Shepherd never propagates"},
		{name: "a malformed apiVersion", kind: workv1alpha1.KindResourceBinding, namespace: "team-a", binding: "cfg-configmap",
			res: with(func(r *workv1alpha1.ObjectReference) { r.APIVersion = "a/b/c" }), err: `spec.resource.apiVersion "a/b/c"`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := checkResource(tt.kind, tt.namespace, tt.binding, tt.res)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("want nil, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("want an error with %q, got %v", tt.err, err)
			}
		})
	}
}

// TestWorkKindFromBinding: the Work's resource kind annotation, which
// the execution controller holds the manifest to, comes from the
// binding's resource, not from the manifest it carries.
func TestWorkKindFromBinding(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "web", UID: "u"}}
	m := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "web", "namespace": "a"}}}
	w := desiredWork(names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "a", Name: "web-deployment"}, "c1", m, 1, spec)
	if got := w.GetAnnotations()[workv1alpha1.AnnotationResourceKind]; got != "Deployment.apps" {
		t.Fatalf("resource kind annotation %q, want Deployment.apps", got)
	}
}
