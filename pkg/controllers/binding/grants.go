package binding

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// ReasonEscalationForbidden is the Warning event on a binding (and its
// template) when the manifest rendered for a cluster would grant, in the
// member, rights that its namespace's users could not grant on the hub.
// That cluster's Work is left as it was.
const ReasonEscalationForbidden = "EscalationForbidden"

// broadGroups are the groups that hold identities of every namespace (or
// none): a role bound to one reaches beyond the binding's namespace.
var broadGroups = []string{"system:authenticated", "system:unauthenticated", "system:serviceaccounts", "system:masters", "system:nodes"}

// checkGrants refuses a RoleBinding or ClusterRoleBinding, rendered for a
// binding that a namespaced PropagationPolicy governs (a tenant's), whose
// subjects reach beyond the binding's namespace: a group that holds every
// authenticated (or unauthenticated) identity, every service account,
// the cluster's administrators or nodes, the service accounts of another
// namespace, or a service account of another namespace. In a member such a
// subject includes identities the tenant never saw on the hub (the
// member's own controllers and users). An administrator propagates such a
// binding with a ClusterPropagationPolicy. The rules, aggregationRule,
// roleRef and subjects that override policies write are checked when the
// policy is written (the shepherd-overrides admission policy).
func checkGrants(m *unstructured.Unstructured, spec *workv1alpha1.BindingSpec) error {
	gv := m.GroupVersionKind()
	if gv.Group != "rbac.authorization.k8s.io" || (gv.Kind != "RoleBinding" && gv.Kind != "ClusterRoleBinding") {
		return nil
	}
	if spec.PolicyRef == nil || spec.PolicyRef.Kind != policyv1alpha1.KindPropagationPolicy {
		return nil
	}
	ns := spec.Resource.Namespace
	subjects, _, _ := unstructured.NestedSlice(m.Object, "subjects")
	for i, s := range subjects {
		sm, _ := s.(map[string]any)
		kind, _ := sm["kind"].(string)
		name, _ := sm["name"].(string)
		subjectNS, _ := sm["namespace"].(string)
		var why string
		switch kind {
		case "Group":
			for _, g := range broadGroups {
				if name == g {
					why = "a group of identities of every namespace"
				}
			}
			if strings.HasPrefix(name, "system:serviceaccounts:") && name != "system:serviceaccounts:"+ns {
				why = "the service accounts of another namespace"
			}
		case "User":
			if name == "system:anonymous" {
				why = "the anonymous user"
			}
			if strings.HasPrefix(name, "system:serviceaccount:") && !strings.HasPrefix(name, "system:serviceaccount:"+ns+":") {
				why = "a service account of another namespace"
			}
		case "ServiceAccount":
			if subjectNS != "" && subjectNS != ns {
				why = "a service account of another namespace"
			}
		}
		if why != "" {
			return fmt.Errorf("subjects[%d] (%s %s) is %s: a binding of namespace %s propagated by PropagationPolicy %s may grant rights only within its namespace in the members; an administrator propagates it with a ClusterPropagationPolicy",
				i, kind, strings.TrimPrefix(subjectNS+"/"+name, "/"), why, ns, spec.PolicyRef.Name)
		}
	}
	return nil
}
