package names

import (
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// AnnotationBinding on a Work holds its binding as "<kind>/<namespace>/<name>"
// (namespace empty for a ClusterResourceBinding). The binding labels say the
// same, but a label value is cut to 63 characters and hashed (see
// LabelValue), so mapping a Work event back to its binding reads this
// annotation instead.
const AnnotationBinding = "work.shepherd.io/binding"

// AnnotationResourceKind on a Work holds the group and kind of its
// binding's resource as "<Kind>.<group>" ("ConfigMap" for the core group),
// schema.GroupKind's String form. The execution controller applies a
// manifest only of this kind, and a ResourceBinding's Work only into the
// binding's namespace: a Work never writes outside what its binding names.
const AnnotationResourceKind = "work.shepherd.io/resource-kind"

// AnnotationRescheduleObserved on a binding holds, in RFC 3339, the
// spec.rescheduleTriggeredAt the scheduler last served with a successful
// Fresh cycle. It is written in the same patch as spec.clusters.
//
// Times in the API have second precision, so a stamp and the
// lastScheduledTime of a cycle that ran in the same second compare equal:
// "stamp later than lastScheduledTime" would drop a request made in the
// second the binding was last scheduled, and "stamp not earlier" would
// serve every stamp twice. The annotation breaks the tie (see the
// scheduling controller's RescheduleServed).
const AnnotationRescheduleObserved = "work.shepherd.io/reschedule-observed"

// AnnotationTemplateGeneration on a Work (and on a binding) holds the metadata.generation of
// the hub template its manifest was built from: once every Work of a
// binding holds the template's current generation and every member has
// observed it, the template's status.observedGeneration says so.
const AnnotationTemplateGeneration = "work.shepherd.io/template-generation"

// AnnotationAppliedOverrides on a Work lists the override policy rules
// applied to its manifest, in the order applied, as
// "<Kind> <namespace>/<name> rule <n>" entries joined by "; " (a
// ClusterOverridePolicy without namespace); absent when none applied.
const AnnotationAppliedOverrides = "policy.shepherd.io/applied-overrides"

// AnnotationTiedPolicies on a binding lists the policies that match its
// template exactly as well as the one governing it (same kind of policy,
// selector strength and priority), as PolicyRef strings separated by
// commas, the governing one included. The policy status controller reports
// them on each policy.
const AnnotationTiedPolicies = "policy.shepherd.io/tied-policies"

// PolicyRef names a policy in AnnotationTiedPolicies and policy statuses:
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

// String is the AnnotationBinding form, "<kind>/<namespace>/<name>".
func (r BindingRef) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// ParseBindingRef parses the AnnotationBinding form.
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

// AnnotationRevision on a Work names the binding's rollout revision its
// manifest was rendered from (status.rollout.revision, a hash of the
// template and the override policies that apply to it); only Works of
// bindings with a Progressive or Staged rollout carry it.
const AnnotationRevision = "work.shepherd.io/revision"
