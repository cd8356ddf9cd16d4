package bindingutil

import (
	"slices"
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// StateOf returns a target's state; the empty state means Scheduled.
func StateOf(t workv1alpha1.TargetCluster) workv1alpha1.TargetState {
	if t.State == "" {
		return workv1alpha1.TargetScheduled
	}
	return t.State
}

// IsActive reports whether the target is part of the placement (Scheduled
// or Bound), as opposed to Unscheduled and on its way out.
func IsActive(t workv1alpha1.TargetCluster) bool {
	return t.State != workv1alpha1.TargetUnscheduled
}

// ActiveTargets returns the Scheduled and Bound targets, in their order.
func ActiveTargets(ts []workv1alpha1.TargetCluster) []workv1alpha1.TargetCluster {
	out := make([]workv1alpha1.TargetCluster, 0, len(ts))
	for _, t := range ts {
		if IsActive(t) {
			out = append(out, t)
		}
	}
	return out
}

// WorkTargets are the clusters a binding has Works in: its active targets,
// then, for a binding other bindings depend on (spec.requiredBy), every
// cluster a dependent runs on that is not already a target. Sorted by name.
func WorkTargets(spec *workv1alpha1.BindingSpec) []workv1alpha1.TargetCluster {
	out := ActiveTargets(spec.Clusters)
	if len(spec.RequiredBy) == 0 {
		return out
	}
	seen := make(map[string]bool, len(out))
	for _, t := range out {
		seen[t.Name] = true
	}
	for _, r := range spec.RequiredBy {
		for _, c := range r.Clusters {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, workv1alpha1.TargetCluster{Name: c.Name})
			}
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha1.TargetCluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}
