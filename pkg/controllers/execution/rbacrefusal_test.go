package execution

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestIsRBACEscalation: only the API server's refusal to store an RBAC
// object granting rights its writer lacks is mapped; other refusals keep
// their own handling.
func TestIsRBACEscalation(t *testing.T) {
	role := workv1alpha1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "operator"}
	cm := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}
	gr := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}
	escalation := apierrors.NewForbidden(gr, "operator", errors.New(`user "system:serviceaccount:shepherd-system:shepherd-hub" (groups=["system:serviceaccounts"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`))
	for _, tc := range []struct {
		name string
		id   workv1alpha1.ResourceIdentifier
		err  error
		want bool
	}{
		{"escalation refused", role, escalation, true},
		{"binding refused", workv1alpha1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Namespace: "ns", Name: "b"}, escalation, true},
		{"kind not writable at all", role, apierrors.NewForbidden(gr, "operator", errors.New(`User "x" cannot create resource "clusterroles"`)), false},
		{"not an RBAC object", cm, escalation, false},
		{"not forbidden", role, apierrors.NewInvalid(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, "operator", nil), false},
		{"no error", role, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isRBACEscalation(tc.id, tc.err); got != tc.want {
				t.Errorf("isRBACEscalation = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRBACRefusal: the message names the cluster, the objects (a few, then
// a count) and the fix for the cluster's mode.
func TestRBACRefusal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pull    bool
		objects []string
		want    []string
		not     []string
	}{
		{"one object of a Push cluster", false, []string{"ClusterRole operator"},
			[]string{"cluster member1 refused 1 RBAC object (ClusterRole operator):", "`shepherd join member1 --kubeconfig FILE --allow-rbac-propagation`", "escalate and bind", "docs/fleet-integrity.md"},
			[]string{"shepherd register", "more"}},
		{"a Pull cluster's agent", true, []string{"ClusterRole operator", "ClusterRoleBinding operator"},
			[]string{"cluster member1 refused 2 RBAC objects (ClusterRole operator, ClusterRoleBinding operator):", "`shepherd register member1 --force --deploy --member-kubeconfig FILE --allow-rbac-propagation`"},
			[]string{"shepherd join"}},
		{"many objects", false, []string{"ClusterRole a", "ClusterRole b", "ClusterRoleBinding a", "Role ns/c", "RoleBinding ns/c"},
			[]string{"refused 5 RBAC objects (ClusterRole a, ClusterRole b, ClusterRoleBinding a and 2 more)"},
			[]string{"Role ns/c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rbacRefusal("member1", tc.pull, tc.objects)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("message %q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("message %q has %q", got, n)
				}
			}
			// The binding's FullyApplied condition quotes the first 512
			// characters of a Work's message: the fix must be among them.
			if i := strings.Index(got, "--allow-rbac-propagation"); i < 0 || i > 512 {
				t.Errorf("the fix is at %d of %q", i, got)
			}
		})
	}
	if got := kindAndName(workv1alpha1.ResourceIdentifier{Kind: "Role", Namespace: "ns", Name: "r"}); got != "Role ns/r" {
		t.Errorf("kindAndName = %q", got)
	}
}
