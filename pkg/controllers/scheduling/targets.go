package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// MergeTargets returns the binding's new spec.clusters from its current
// targets and the clusters the scheduler picked (placed):
//
//   - a picked cluster that is an active target keeps its state (a Bound
//     target stays Bound while its replicas change: its Work exists and is
//     updated in place); a picked cluster that is new, or Unscheduled and
//     picked again, is Scheduled; either takes the picked replicas and
//     components (none for a workload without components);
//   - an active target not picked becomes Unscheduled, keeping its
//     replicas: the binding controller removes its Work and then the
//     target;
//   - an Unscheduled target not picked stays as it is.
//
// With additive (TriggerFleetChanged) every active target stays as it is
// and only picked clusters that are not active targets are added, so a
// cluster becoming eligible never moves the others.
//
// The result is sorted by name. Neither input is modified.
func MergeTargets(current, placed []workv1alpha1.TargetCluster, additive bool) []workv1alpha1.TargetCluster {
	byName := make(map[string]workv1alpha1.TargetCluster, len(current))
	for _, t := range current {
		byName[t.Name] = t
	}
	picked := make(map[string]bool, len(placed))
	out := make([]workv1alpha1.TargetCluster, 0, len(current)+len(placed))
	for _, p := range placed {
		picked[p.Name] = true
		t, ok := byName[p.Name]
		switch {
		case ok && bindingutil.IsActive(t) && additive:
			out = append(out, t)
		case ok && bindingutil.IsActive(t):
			out = append(out, workv1alpha1.TargetCluster{Name: p.Name, Replicas: p.Replicas, State: t.State, Components: p.Components})
		default:
			out = append(out, workv1alpha1.TargetCluster{Name: p.Name, Replicas: p.Replicas, State: workv1alpha1.TargetScheduled, Components: p.Components})
		}
	}
	for _, t := range current {
		switch {
		case picked[t.Name]:
		case bindingutil.IsActive(t) && !additive:
			t.State = workv1alpha1.TargetUnscheduled
			out = append(out, t)
		default:
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b workv1alpha1.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// maxDescribed bounds the targets an event names, so that placing on a
// large fleet does not write a huge event.
const maxDescribed = 16

// describeTargets renders active targets for events: "a:3, b:3", or,
// for a workload whose components were divided (division), each cluster's
// components and the head: "a (head):head=1,workers=3, b:workers=2".
func describeTargets(ts []workv1alpha1.TargetCluster, division *workv1alpha1.DividedComponents) string {
	active := bindingutil.ActiveTargets(ts)
	if len(active) == 0 {
		return "no cluster"
	}
	parts := make([]string, 0, min(len(active), maxDescribed)+1)
	for _, t := range active[:min(len(active), maxDescribed)] {
		if division == nil {
			parts = append(parts, fmt.Sprintf("%s:%d", t.Name, t.Replicas))
			continue
		}
		name := t.Name
		if t.Name == division.HeadCluster {
			name += " (head)"
		}
		cs := make([]string, len(t.Components))
		for i, c := range t.Components {
			cs[i] = fmt.Sprintf("%s=%d", c.Name, c.Replicas)
		}
		parts = append(parts, name+":"+strings.Join(cs, ","))
	}
	if n := len(active) - maxDescribed; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, ", ")
}
