package execution

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// ReasonRBACEscalationForbidden: the member refused RBAC objects of the
// Work because they grant rights the identity Shepherd writes with there
// does not hold (it lacks escalate and bind). The refusal lasts until that
// identity's rights change, which a re-join with --allow-rbac-propagation
// does.
const ReasonRBACEscalationForbidden = "RBACEscalationForbidden"

// escalationRefusal is what the API server's RBAC storage says when a
// writer without escalate (for roles) or bind (for bindings) stores a role
// or a binding granting more than the writer holds.
const escalationRefusal = "attempting to grant RBAC permissions not currently held"

// isRBACEscalation reports whether err is the member's refusal of the RBAC
// object id for granting rights its writer lacks. A plain Forbidden (the
// writer may not create the kind at all) is not: the Authorized condition
// of the Cluster covers that.
func isRBACEscalation(id workv1alpha1.ResourceIdentifier, err error) bool {
	return id.Group == rbacv1.GroupName && apierrors.IsForbidden(err) && strings.Contains(err.Error(), escalationRefusal)
}

// maxNamedRefusals bounds the objects rbacRefusal names: the binding's
// FullyApplied condition quotes only the start of each Work's message.
const maxNamedRefusals = 3

// rbacRefusal explains refused RBAC objects (kind and name, in manifest
// order) of a Work for cluster: which cluster refused what, and the fix,
// which depends on who writes there (the hub for Push clusters, the agent
// for Pull ones). It comes first in the Applied condition's message, before
// the API server's own refusals.
func rbacRefusal(cluster string, pull bool, objects []string) string {
	named := strings.Join(objects[:min(len(objects), maxNamedRefusals)], ", ")
	if extra := len(objects) - maxNamedRefusals; extra > 0 {
		named += fmt.Sprintf(" and %d more", extra)
	}
	fix := fmt.Sprintf("re-join the cluster with `shepherd join %s --kubeconfig FILE --allow-rbac-propagation`", cluster)
	if pull {
		fix = fmt.Sprintf("deploy its agent again with `shepherd register %s --force --deploy --member-kubeconfig FILE --allow-rbac-propagation`", cluster)
	}
	noun := "object"
	if len(objects) > 1 {
		noun = "objects"
	}
	return fmt.Sprintf("cluster %s refused %d RBAC %s (%s): the identity Shepherd applies them with may not grant rights it does not hold itself; %s, or grant that identity escalate and bind on roles and clusterroles in the member (docs/fleet-integrity.md)",
		cluster, len(objects), noun, named, fix)
}

// kindAndName names an object in rbacRefusal: "ClusterRole admin",
// "Role ns/reader".
func kindAndName(id workv1alpha1.ResourceIdentifier) string {
	if id.Namespace != "" {
		return id.Kind + " " + id.Namespace + "/" + id.Name
	}
	return id.Kind + " " + id.Name
}
