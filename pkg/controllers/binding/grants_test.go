package binding

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestCheckGrants: a tenant's RoleBinding reaches, in the members, only
// identities of its own namespace; an administrator's (propagated by a
// ClusterPropagationPolicy) is not limited, and nothing but role bindings
// is looked at.
func TestCheckGrants(t *testing.T) {
	rb := func(kind string, subjects ...map[string]any) *unstructured.Unstructured {
		s := make([]any, len(subjects))
		for i, x := range subjects {
			s[i] = x
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
			"metadata": map[string]any{"name": "rb", "namespace": "team-a"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
			"subjects": s,
		}}
	}
	subject := func(kind, ns, name string) map[string]any {
		m := map[string]any{"kind": kind, "name": name}
		if ns != "" {
			m["namespace"] = ns
		}
		return m
	}
	tenant := &workv1alpha1.BindingSpec{
		Resource:  workv1alpha1.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: "team-a", Name: "rb", UID: "u"},
		PolicyRef: &workv1alpha1.PolicyReference{Kind: policyv1alpha1.KindPropagationPolicy, Namespace: "team-a", Name: "p"},
	}
	admin := tenant.DeepCopy()
	admin.PolicyRef = &workv1alpha1.PolicyReference{Kind: policyv1alpha1.KindClusterPropagationPolicy, Name: "p"}
	cases := []struct {
		name string
		m    *unstructured.Unstructured
		spec *workv1alpha1.BindingSpec
		err  string
	}{
		{name: "its own service account", m: rb("RoleBinding", subject("ServiceAccount", "team-a", "default")), spec: tenant},
		{name: "a user and a team group", m: rb("RoleBinding", subject("User", "", "alice"), subject("Group", "", "team-a-devs")), spec: tenant},
		{name: "its own namespace's service accounts", m: rb("RoleBinding", subject("Group", "", "system:serviceaccounts:team-a")), spec: tenant},
		{name: "every authenticated identity", m: rb("RoleBinding", subject("ServiceAccount", "team-a", "default"), subject("Group", "", "system:authenticated")), spec: tenant,
			err: "subjects[1] (Group system:authenticated) is a group of identities of every namespace"},
		{name: "every service account", m: rb("RoleBinding", subject("Group", "", "system:serviceaccounts")), spec: tenant, err: "a group of identities of every namespace"},
		{name: "anonymous", m: rb("RoleBinding", subject("User", "", "system:anonymous")), spec: tenant, err: "the anonymous user"},
		{name: "another namespace's service account", m: rb("RoleBinding", subject("ServiceAccount", "kube-system", "default")), spec: tenant,
			err: "subjects[0] (ServiceAccount kube-system/default) is a service account of another namespace"},
		{name: "another namespace's service account as a user", m: rb("RoleBinding", subject("User", "", "system:serviceaccount:kube-system:default")), spec: tenant,
			err: "a service account of another namespace"},
		{name: "another namespace's service accounts", m: rb("RoleBinding", subject("Group", "", "system:serviceaccounts:team-b")), spec: tenant,
			err: "the service accounts of another namespace"},
		{name: "an administrator's binding", m: rb("RoleBinding", subject("Group", "", "system:authenticated")), spec: admin},
		{name: "not a role binding", m: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"subjects": []any{map[string]any{"kind": "Group", "name": "system:authenticated"}}}}, spec: tenant},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := checkGrants(tt.m, tt.spec)
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
