package bindingutil

import (
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
