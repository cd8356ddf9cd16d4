package install

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/shepherd-io/shepherd/pkg/install"
)

// testDenials asks the API server, as the controller manager, what it may
// do: rights it must not have are refused, and the broad ones it has are
// as broad as docs/install.md says, and no broader.
func testDenials(t *testing.T) {
	sa, err := kubernetes.NewForConfig(serviceAccountConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		verb, group, resource, subresource, namespace, name string
		allowed                                             bool
	}{
		// Escalation: no RBAC, no impersonation, no tokens, no CRDs.
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "impersonate", resource: "users"},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: install.Namespace, name: install.Deployment},
		{verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions"},
		// Templates: read everything, write only status.
		{verb: "list", group: "apps", resource: "deployments", allowed: true},
		{verb: "patch", group: "apps", resource: "deployments", subresource: "status", namespace: "default", allowed: true},
		{verb: "patch", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "update", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "delete", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "create", resource: "pods", namespace: "default"},
		{verb: "delete", resource: "namespaces"},
		// Secrets: read everywhere (templates, dependencies), written only
		// in shepherd-system, and never created or deleted.
		{verb: "get", resource: "secrets", namespace: "default", allowed: true},
		{verb: "patch", resource: "secrets", namespace: install.Namespace, allowed: true},
		{verb: "patch", resource: "secrets", namespace: "default"},
		{verb: "update", resource: "secrets", namespace: install.Namespace},
		{verb: "create", resource: "secrets", namespace: install.Namespace},
		{verb: "delete", resource: "secrets", namespace: install.Namespace},
		// Leases: its own in shepherd-system; agents' only read.
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: install.Namespace, allowed: true},
		{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "shepherd-es-member1", allowed: true},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "shepherd-es-member1"},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system"},
		// Webhook configurations: its own, by name.
		{verb: "update", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "shepherd-healthinterpreter", allowed: true},
		{verb: "update", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "someone-elses"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations"},
		{verb: "update", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "shepherd-healthinterpreter"},
		// Shepherd's own objects: users' policies are read, not written.
		{verb: "update", group: "policy.shepherd.io", resource: "propagationpolicies", namespace: "default"},
		{verb: "delete", group: "cluster.shepherd.io", resource: "clusters"},
	} {
		attrs := &authorizationv1.ResourceAttributes{Verb: tc.verb, Group: tc.group, Resource: tc.resource,
			Subresource: tc.subresource, Namespace: tc.namespace, Name: tc.name}
		review, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.allowed {
			t.Errorf("%s %s/%s (subresource %q, namespace %q, name %q): allowed %v, want %v",
				tc.verb, tc.group, tc.resource, tc.subresource, tc.namespace, tc.name, review.Status.Allowed, tc.allowed)
		}
	}
	// And a real request, not only a review.
	_, err = sa.RbacV1().ClusterRoleBindings().Create(context.Background(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "least-privilege-escalation"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: install.Namespace, Name: install.Deployment}},
	}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("creating a ClusterRoleBinding to cluster-admin: err = %v, want Forbidden", err)
	}
}
