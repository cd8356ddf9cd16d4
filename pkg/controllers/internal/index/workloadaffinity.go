package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// BindingsByWorkloadAffinityGroup indexes ResourceBindings by their
// workload affinity groups (spec.workloadAffinityGroups), keyed by
// AffinityGroupKey and AntiAffinityGroupKey: the scheduler finds the other
// members of a binding's groups with one lookup per group rather than by
// listing every binding each cycle. Only ResourceBindings carry groups.
const BindingsByWorkloadAffinityGroup = "scheduling.shepherd.io/workload-affinity-group"

// SetupBindingsByWorkloadAffinityGroup registers
// BindingsByWorkloadAffinityGroup, once.
func SetupBindingsByWorkloadAffinityGroup(d controllerdeps.Deps) error {
	return register(d, BindingsByWorkloadAffinityGroup, &workv1alpha1.ResourceBinding{}, BindingsByWorkloadAffinityGroup, workloadAffinityGroups)
}

// AffinityGroupKey is the key of the affinity group named group in
// namespace. The namespace is part of the key: groups never cross
// namespaces, and the group name alone is the same in every namespace.
func AffinityGroupKey(namespace, group string) string {
	return "affinity/" + namespace + "/" + group
}

// AntiAffinityGroupKey is the key of the anti-affinity group named group
// in namespace. Affinity and anti-affinity groups of the same name are
// distinct groups, hence distinct keys.
func AntiAffinityGroupKey(namespace, group string) string {
	return "anti-affinity/" + namespace + "/" + group
}

func workloadAffinityGroups(o client.Object) []string {
	b := o.(*workv1alpha1.ResourceBinding)
	g := b.Spec.WorkloadAffinityGroups
	if g == nil {
		return nil
	}
	var out []string
	if g.AffinityGroup != "" {
		out = append(out, AffinityGroupKey(b.Namespace, g.AffinityGroup))
	}
	if g.AntiAffinityGroup != "" {
		out = append(out, AntiAffinityGroupKey(b.Namespace, g.AntiAffinityGroup))
	}
	return out
}
