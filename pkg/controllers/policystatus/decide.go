package policystatus

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Reasons of the policy conditions.
const (
	ReasonTied            = "Tied"
	ReasonNoTie           = "NoTie"
	ReasonUnknownClusters = "UnknownClusters"
	ReasonAllFound        = "AllFound"
)

// bindingFacts is what the status needs of one binding.
type bindingFacts struct {
	// template is "Kind namespace/name".
	template string
	// governedBy is the policy governing it, as names.PolicyRef.
	governedBy string
	// tied are the tied policies (AnnotationTiedPolicies), the governing one included.
	tied []string
}

// decide returns the status of the policy self (a names.PolicyRef) given
// the bindings it governs, the bindings on which it ties, the clusters its
// placement names and the Clusters that exist. prev is the current status,
// whose conditions keep their transition times when unchanged.
func decide(self string, generation int64, governed, tiedOn []bindingFacts, named []string, exists func(string) bool, prev *policyv1alpha1.PolicyStatus) policyv1alpha1.PolicyStatus {
	st := policyv1alpha1.PolicyStatus{ObservedGeneration: generation, MatchedTemplates: int32(len(governed))}
	templates := make([]string, 0, len(governed))
	for _, b := range governed {
		templates = append(templates, b.template)
	}
	slices.Sort(templates)
	if len(templates) > policyv1alpha1.MaxListedInStatus {
		templates = templates[:policyv1alpha1.MaxListedInStatus]
	}
	if len(templates) > 0 {
		st.Templates = templates
	}

	conflicts := make([]policyv1alpha1.PolicyConflict, 0, len(tiedOn))
	for _, b := range tiedOn {
		if !slices.Contains(b.tied, self) {
			continue
		}
		conflicts = append(conflicts, policyv1alpha1.PolicyConflict{Template: b.template, GovernedBy: b.governedBy, Policies: slices.Clone(b.tied)})
	}
	slices.SortFunc(conflicts, func(a, b policyv1alpha1.PolicyConflict) int { return strings.Compare(a.Template, b.Template) })
	total := len(conflicts)
	if len(conflicts) > policyv1alpha1.MaxListedInStatus {
		conflicts = conflicts[:policyv1alpha1.MaxListedInStatus]
	}
	if len(conflicts) > 0 {
		st.Conflicts = conflicts
	}

	seen := map[string]bool{}
	for _, c := range named {
		if !seen[c] && !exists(c) {
			st.UnknownClusters = append(st.UnknownClusters, c)
		}
		seen[c] = true
	}
	slices.Sort(st.UnknownClusters)

	st.Conditions = slices.Clone(prev.Conditions)
	conflicted := metav1.Condition{Type: policyv1alpha1.PolicyConditionConflicted, Status: metav1.ConditionFalse, Reason: ReasonNoTie,
		Message: "No other policy matches its templates equally well.", ObservedGeneration: generation}
	if total > 0 {
		c := conflicts[0]
		conflicted.Status, conflicted.Reason = metav1.ConditionTrue, ReasonTied
		conflicted.Message = fmt.Sprintf("%d templates are matched equally well by other policies (same selector strength and priority), e.g. %s by %s; "+
			"the policy whose name sorts first governs them (%s). Give the intended policy a higher spec.priority.",
			total, c.Template, strings.Join(c.Policies, " and "), c.GovernedBy)
	}
	meta.SetStatusCondition(&st.Conditions, conflicted)
	found := metav1.Condition{Type: policyv1alpha1.PolicyConditionClustersFound, Status: metav1.ConditionTrue, Reason: ReasonAllFound,
		Message: "Every cluster the placement names exists.", ObservedGeneration: generation}
	if len(st.UnknownClusters) > 0 {
		found.Status, found.Reason = metav1.ConditionFalse, ReasonUnknownClusters
		found.Message = fmt.Sprintf("The placement names clusters that do not exist: %s. Check the names (kubectl get clusters) or join them.", strings.Join(st.UnknownClusters, ", "))
	}
	meta.SetStatusCondition(&st.Conditions, found)
	return st
}

// namedClusters are the cluster names a placement asks for: its affinity
// terms' clusterNames and the static weights' cluster names. Excluded
// names are not among them: excluding a cluster not joined (yet) is fine.
func namedClusters(p *policyv1alpha1.Placement) []string {
	var out []string
	add := func(a *policyv1alpha1.ClusterAffinity) {
		if a != nil {
			out = append(out, a.ClusterNames...)
		}
	}
	add(p.ClusterAffinity)
	for i := range p.ClusterAffinities {
		add(&p.ClusterAffinities[i].ClusterAffinity)
	}
	for i := range p.PreferredClusterAffinities {
		add(&p.PreferredClusterAffinities[i].Preference)
	}
	if rs := p.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		for i := range rs.WeightPreference.StaticWeightList {
			add(&rs.WeightPreference.StaticWeightList[i].TargetCluster)
		}
	}
	return out
}
