package placement

import (
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// WorkloadAffinityGroups resolves placement.workloadAffinity for a
// namespaced template with the given labels: each term names the group
// "<groupByLabelKey>=<value>" when the template has the label (an empty
// value is a value, as in Karmada), and none otherwise. Nil when the
// template is in no group. The namespace is not part of the name: only
// ResourceBindings carry groups, and peers are looked up in the binding's
// own namespace.
func WorkloadAffinityGroups(p *policyv1alpha1.Placement, labels map[string]string) *workv1alpha1.WorkloadAffinityGroups {
	if p == nil || p.WorkloadAffinity == nil {
		return nil
	}
	g := &workv1alpha1.WorkloadAffinityGroups{
		AffinityGroup:     groupOf(p.WorkloadAffinity.Affinity, labels),
		AntiAffinityGroup: groupOf(p.WorkloadAffinity.AntiAffinity, labels),
	}
	if g.AffinityGroup == "" && g.AntiAffinityGroup == "" {
		return nil
	}
	return g
}

func groupOf(t *policyv1alpha1.WorkloadAffinityTerm, labels map[string]string) string {
	if t == nil || t.GroupByLabelKey == "" {
		return ""
	}
	v, ok := labels[t.GroupByLabelKey]
	if !ok {
		return ""
	}
	return t.GroupByLabelKey + "=" + v
}
