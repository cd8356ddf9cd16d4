// Package policymatch decides which propagation policy governs a
// resource template: the detector's decision, which writes the binding,
// and the what-if of `shepherd plan` and the dashboard (package scenario),
// which must foresee that same decision. The one definition lives here,
// below both, because a what-if is only worth asking when it answers as
// the detector will: a copy of its own would drift from it unnoticed.
//
// How specifically one selector picks a template is package
// resourceselector's, shared with the override engine; this package ranks
// whole policies by it, with their kind, priority and preemption.
package policymatch

import (
	"cmp"
	"slices"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Template is what matching reads of a resource template
// (resourceselector.TemplateOf builds one from an object).
type Template = resourceselector.Template

// policyStrength is the strength of p's strongest selector for t.
func policyStrength(p policyv1alpha1.PolicyObject, t *Template) resourceselector.Strength {
	return resourceselector.Strongest(p.GetPropagationSpec().ResourceSelectors, p.GetNamespace(), t)
}

// Match returns the policy governing t, nil when none matches. A matching
// PropagationPolicy (of t's namespace) always beats a matching
// ClusterPropagationPolicy. Among policies of one kind, the one whose
// selector names t beats one matching by labels, which beats one naming
// only the kind; then the higher spec.priority wins; then the name sorting
// first. Policies being deleted match nothing. The result does not depend
// on the order of the inputs.
func Match(t *Template, policies, clusterPolicies []policyv1alpha1.PolicyObject) policyv1alpha1.PolicyObject {
	if p := best(t, policies); p != nil {
		return p
	}
	return best(t, clusterPolicies)
}

// Tied returns the policies that match t exactly as well as winner, the
// policy Match returned: of winner's kind, with the same selector strength
// and priority, so that only the names decided. winner is not among them;
// they are sorted by namespace and name.
func Tied(t *Template, winner policyv1alpha1.PolicyObject, policies, clusterPolicies []policyv1alpha1.PolicyObject) []policyv1alpha1.PolicyObject {
	if winner == nil {
		return nil
	}
	candidates := policies
	if winner.GetNamespace() == "" {
		candidates = clusterPolicies
	}
	ws, wp := policyStrength(winner, t), priority(winner)
	var out []policyv1alpha1.PolicyObject
	for _, p := range candidates {
		if p.GetDeletionTimestamp() != nil || (p.GetNamespace() == winner.GetNamespace() && p.GetName() == winner.GetName()) {
			continue
		}
		if policyStrength(p, t) == ws && priority(p) == wp {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b policyv1alpha1.PolicyObject) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}

func best(t *Template, policies []policyv1alpha1.PolicyObject) policyv1alpha1.PolicyObject {
	type scored struct {
		p policyv1alpha1.PolicyObject
		s resourceselector.Strength
	}
	var matches []scored
	for _, p := range policies {
		if p.GetDeletionTimestamp() != nil {
			continue
		}
		if s := policyStrength(p, t); s != resourceselector.NoMatch {
			matches = append(matches, scored{p, s})
		}
	}
	if len(matches) == 0 {
		return nil
	}
	return slices.MinFunc(matches, func(a, b scored) int {
		return cmp.Or(
			cmp.Compare(b.s, a.s),
			cmp.Compare(priority(b.p), priority(a.p)),
			cmp.Compare(a.p.GetName(), b.p.GetName()),
			cmp.Compare(a.p.GetNamespace(), b.p.GetNamespace()),
		)
	}).p
}

func priority(p policyv1alpha1.PolicyObject) int32 {
	if pr := p.GetPropagationSpec().Priority; pr != nil {
		return *pr
	}
	return 0
}

// Govern returns the policy governing t when claimant (the policy its
// binding names in spec.policyRef; nil for a template not yet bound) may
// hold a claim on it, as Karmada defines preemption:
//
//   - A template stays with the policy that claimed it while that policy
//     exists and still matches it, even when a better policy appears: a
//     new policy does not move running workloads by default.
//   - A policy with spec.preemption: Always takes templates over from a
//     claimant it outranks: a PropagationPolicy outranks any
//     ClusterPropagationPolicy and a PropagationPolicy of lower
//     spec.priority; a ClusterPropagationPolicy outranks a
//     ClusterPropagationPolicy of lower spec.priority, whatever their
//     selectors (as in Karmada, only the explicit priority counts here).
//     A ClusterPropagationPolicy with spec.namespacedPreemption: Deny is
//     not outranked by any PropagationPolicy.
//     Among several that may, Match's order decides.
//   - A template without a claim, or whose claimant is gone, being deleted
//     or no longer matching, goes to the best policy (Match).
//
// preempted is the claimant when the winner took the template from it.
func Govern(t *Template, claimant *workv1alpha1.PolicyReference, policies, clusterPolicies []policyv1alpha1.PolicyObject) (winner, preempted policyv1alpha1.PolicyObject) {
	held := find(claimant, policies, clusterPolicies)
	if held == nil || held.GetDeletionTimestamp() != nil || policyStrength(held, t) == resourceselector.NoMatch {
		return Match(t, policies, clusterPolicies), nil
	}
	may := func(ps []policyv1alpha1.PolicyObject) []policyv1alpha1.PolicyObject {
		var out []policyv1alpha1.PolicyObject
		for _, p := range ps {
			if p != held && mayPreempt(p, held) {
				out = append(out, p)
			}
		}
		return out
	}
	if winner = Match(t, may(policies), may(clusterPolicies)); winner == nil {
		return held, nil
	}
	return winner, held
}

// mayPreempt says whether p may take a template over from claimant.
func mayPreempt(p, claimant policyv1alpha1.PolicyObject) bool {
	if p.GetPropagationSpec().Preemption != policyv1alpha1.PreemptAlways {
		return false
	}
	pIsCluster, cIsCluster := p.GetNamespace() == "", claimant.GetNamespace() == ""
	switch {
	case !pIsCluster && cIsCluster:
		return claimant.GetPropagationSpec().NamespacedPreemption != policyv1alpha1.NamespacedPreemptionDeny
	case pIsCluster && !cIsCluster:
		return false
	}
	return priority(p) > priority(claimant)
}

// find returns the policy ref names, nil when it names none of them.
func find(ref *workv1alpha1.PolicyReference, policies, clusterPolicies []policyv1alpha1.PolicyObject) policyv1alpha1.PolicyObject {
	if ref == nil {
		return nil
	}
	ps := policies
	if ref.Kind == policyv1alpha1.KindClusterPropagationPolicy {
		ps = clusterPolicies
	}
	for _, p := range ps {
		if p.GetName() == ref.Name && p.GetNamespace() == ref.Namespace {
			return p
		}
	}
	return nil
}
