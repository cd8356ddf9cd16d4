package names

import (
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// PolicyRef names a policy in workv1alpha1.AnnotationTiedPolicies and policy statuses:
// "<kind> <namespace>/<name>", or "<kind> <name>" for a cluster-scoped one.
func PolicyRef(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}

// BindingRef identifies a binding of either kind.
type BindingRef struct {
	// Kind: workv1alpha1.KindResourceBinding or KindClusterResourceBinding.
	Kind      string
	Namespace string
	Name      string
}

// String is the workv1alpha1.AnnotationBinding form, "<kind>/<namespace>/<name>".
func (r BindingRef) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// ParseBindingRef parses the workv1alpha1.AnnotationBinding form.
func ParseBindingRef(s string) (BindingRef, bool) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return BindingRef{}, false
	}
	return BindingRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, true
}

// BindingLabels are the labels every Work of the binding carries, without
// the cluster: select with them to find a binding's Works.
func BindingLabels(ref BindingRef) map[string]string {
	return map[string]string{
		workv1alpha1.LabelBindingKind:      ref.Kind,
		workv1alpha1.LabelBindingNamespace: ref.Namespace,
		workv1alpha1.LabelBindingName:      LabelValue(ref.Name),
	}
}

// WorkLabels are the labels of the binding's Work for cluster.
func WorkLabels(ref BindingRef, cluster string) map[string]string {
	l := BindingLabels(ref)
	l[workv1alpha1.LabelCluster] = cluster
	return l
}

// PolicyLabels are the labels of a binding produced by a policy (namespace
// empty for a ClusterPropagationPolicy, and then left out).
func PolicyLabels(kind, namespace, name string) map[string]string {
	l := map[string]string{
		workv1alpha1.LabelPolicyKind: kind,
		workv1alpha1.LabelPolicyName: LabelValue(name),
	}
	if namespace != "" {
		l[workv1alpha1.LabelPolicyNamespace] = namespace
	}
	return l
}
