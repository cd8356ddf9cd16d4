package crd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateUpdate is validate for an update from old: transition rules
// (oldSelf) apply.
func (v *validator) validateUpdate(t *testing.T, manifest, old string) field.ErrorList {
	t.Helper()
	return v.admit.Update(decode(t, manifest), decode(t, old))
}

func wantErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	if len(want) == 0 {
		if len(errs) > 0 {
			t.Fatalf("want valid, got %v", errs.ToAggregate())
		}
		return
	}
	if len(errs) == 0 {
		t.Fatalf("want errors containing %q, got none", want)
	}
	for _, w := range want {
		if msg := errs.ToAggregate().Error(); !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
}

// TestBindingResourceValidation: a binding names its template by UID, a
// ClusterResourceBinding only a cluster-scoped one, and the object a
// binding names never changes after creation (its uid and
// resourceVersion may: the detector follows a template created again).
func TestBindingResourceValidation(t *testing.T) {
	rb := loadValidator(t, "resourcebindings.work.shepherd.io")
	crb := loadValidator(t, "clusterresourcebindings.work.shepherd.io")
	binding := func(kind, resource string) string {
		ns := ""
		if kind == "ResourceBinding" {
			ns = ", namespace: team-a"
		}
		return "apiVersion: work.shepherd.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: cfg-configmap" + ns + "}\nspec:\n  resource: " + resource + "\n"
	}
	const cm = "{apiVersion: v1, kind: ConfigMap, namespace: team-a, name: cfg, uid: u1}"
	cases := []struct {
		name          string
		v             *validator
		kind          string
		resource, old string
		want          []string
	}{
		{name: "as the detector writes it", v: rb, kind: "ResourceBinding", resource: cm},
		{name: "no uid", v: rb, kind: "ResourceBinding", resource: "{apiVersion: v1, kind: ConfigMap, namespace: team-a, name: cfg}", want: []string{"spec.resource.uid", "Required value"}},
		{name: "a ClusterResourceBinding of a namespaced object", v: crb, kind: "ClusterResourceBinding",
			resource: "{apiVersion: v1, kind: Secret, namespace: shepherd-system, name: member2, uid: u1}",
			want:     []string{"spec.resource.namespace must be empty: a ClusterResourceBinding places only a cluster-scoped template"}},
		{name: "a ClusterResourceBinding of a cluster-scoped object", v: crb, kind: "ClusterResourceBinding", resource: "{apiVersion: v1, kind: Namespace, name: team-a, uid: u1}"},
		{name: "redirected at another kind", v: rb, kind: "ResourceBinding", old: cm,
			resource: "{apiVersion: v1, kind: ResourceQuota, namespace: team-a, name: cfg, uid: u1}",
			want:     []string{"spec.resource names the template the binding places and cannot be changed"}},
		{name: "redirected at another namespace", v: rb, kind: "ResourceBinding", old: cm,
			resource: "{apiVersion: v1, kind: ConfigMap, namespace: team-b, name: cfg, uid: u1}", want: []string{"cannot be changed"}},
		{name: "redirected at another name", v: rb, kind: "ResourceBinding", old: cm,
			resource: "{apiVersion: v1, kind: ConfigMap, namespace: team-a, name: other, uid: u1}", want: []string{"cannot be changed"}},
		{name: "redirected at another group", v: rb, kind: "ResourceBinding", old: cm,
			resource: "{apiVersion: example.com/v1, kind: ConfigMap, namespace: team-a, name: cfg, uid: u1}", want: []string{"cannot be changed"}},
		{name: "the template created again (new uid)", v: rb, kind: "ResourceBinding", old: cm,
			resource: "{apiVersion: v1, kind: ConfigMap, namespace: team-a, name: cfg, uid: u2, resourceVersion: '7'}"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.old == "" {
				wantErrors(t, tt.v.validate(t, binding(tt.kind, tt.resource)), tt.want)
				return
			}
			wantErrors(t, tt.v.validateUpdate(t, binding(tt.kind, tt.resource), binding(tt.kind, tt.old)), tt.want)
		})
	}
}

// TestNamespacedPreemptionValidation: only a ClusterPropagationPolicy says
// whether PropagationPolicies may preempt it, with Allow or Deny.
func TestNamespacedPreemptionValidation(t *testing.T) {
	pp := loadValidator(t, "propagationpolicies.policy.shepherd.io")
	cpp := loadValidator(t, "clusterpropagationpolicies.policy.shepherd.io")
	policy := func(kind, value string) string {
		ns := ""
		if kind == "PropagationPolicy" {
			ns = ", namespace: team-a"
		}
		return "apiVersion: policy.shepherd.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: p" + ns + "}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  namespacedPreemption: " + value + "\n"
	}
	wantErrors(t, cpp.validate(t, policy("ClusterPropagationPolicy", "Deny")), nil)
	wantErrors(t, cpp.validate(t, policy("ClusterPropagationPolicy", "Never")), []string{"spec.namespacedPreemption", `Unsupported value: "Never"`})
	wantErrors(t, pp.validate(t, policy("PropagationPolicy", "Deny")), []string{"spec.namespacedPreemption is for a ClusterPropagationPolicy"})
}
