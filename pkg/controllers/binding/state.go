package binding

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Reasons of the FullyApplied condition.
const (
	ReasonFullyAppliedSuccess = "FullyAppliedSuccess"
	ReasonFullyAppliedFailed  = "FullyAppliedFailed"
	ReasonPending             = "Pending"
	ReasonSuspended           = "Suspended"
)

// workState is what the binding controller reads of one target's Work.
type workState struct {
	exists   bool
	deleting bool
	// applied: the execution controller applied the Work's current spec
	// (Applied=True, observed at the Work's generation when it says).
	applied bool
	// failed: Applied=False; message says why.
	failed  bool
	message string
	// suspended: the Work's dispatching is suspended.
	suspended bool
}

func observe(w *workv1alpha1.Work) workState {
	if w == nil {
		return workState{}
	}
	s := workState{exists: true, deleting: w.DeletionTimestamp != nil, suspended: w.Spec.SuspendDispatching}
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
	if c == nil || (c.ObservedGeneration != 0 && c.ObservedGeneration < w.Generation) {
		return s
	}
	switch c.Status {
	case metav1.ConditionTrue:
		s.applied = true
	case metav1.ConditionFalse:
		s.failed, s.message = true, c.Message
	}
	return s
}

// nextTargets moves targets along their life cycle given their Works:
// Scheduled becomes Bound once its Work exists and is applied (also a
// target picked again while its Work still exists: nothing is re-created),
// and an Unscheduled target disappears once its Work is gone. Bound stays
// Bound. It reports whether anything changed; targets is not modified.
func nextTargets(targets []workv1alpha1.TargetCluster, works map[string]workState) ([]workv1alpha1.TargetCluster, bool) {
	out := make([]workv1alpha1.TargetCluster, 0, len(targets))
	changed := false
	for _, t := range targets {
		w := works[t.Name]
		switch bindingutil.StateOf(t) {
		case workv1alpha1.TargetScheduled:
			if w.exists && !w.deleting && w.applied {
				t.State = workv1alpha1.TargetBound
				changed = true
			}
		case workv1alpha1.TargetUnscheduled:
			if !w.exists {
				changed = true
				continue
			}
		}
		out = append(out, t)
	}
	return out, changed
}

// maxListed bounds the clusters a condition message names.
const maxListed = 10

// fullyApplied is the binding's FullyApplied condition: True when the Work
// of every active target is applied; False otherwise, with reason
// FullyAppliedFailed and the failing clusters and their errors when some
// Work failed to apply, or Pending and the clusters still waiting. With no
// active target (not scheduled yet, or unschedulable) there is nothing to
// apply and no condition (false): the Scheduled condition says why, and
// FullyApplied would only repeat it.
func fullyApplied(targets []workv1alpha1.TargetCluster, works map[string]workState) (metav1.Condition, bool) {
	c := metav1.Condition{Type: workv1alpha1.ConditionFullyApplied, Status: metav1.ConditionFalse}
	active := bindingutil.ActiveTargets(targets)
	if len(active) == 0 {
		return c, false
	}
	var failed, pending, suspended []string
	for _, t := range active {
		switch w := works[t.Name]; {
		case w.failed:
			failed = append(failed, fmt.Sprintf("%s (%s)", t.Name, shorten(w.message)))
		case w.suspended && (!w.applied || w.deleting):
			suspended = append(suspended, t.Name)
		case !w.applied || w.deleting:
			pending = append(pending, t.Name)
		}
	}
	switch {
	case len(failed) > 0:
		c.Reason = ReasonFullyAppliedFailed
		c.Message = fmt.Sprintf("Works failed to apply on %d of %d clusters: %s.", len(failed), len(active), listed(failed, "; "))
		if len(pending) > 0 {
			c.Message += fmt.Sprintf(" Waiting for %s.", listed(pending, ", "))
		}
	case len(suspended) > 0:
		c.Reason = ReasonSuspended
		c.Message = fmt.Sprintf("Dispatching is suspended on %d of %d clusters (spec.suspension): %s.", len(suspended), len(active), listed(suspended, ", "))
		if len(pending) > 0 {
			c.Message += fmt.Sprintf(" Waiting for %s.", listed(pending, ", "))
		}
	case len(pending) > 0:
		c.Reason = ReasonPending
		c.Message = fmt.Sprintf("Waiting for Works to be applied on %d of %d clusters: %s.", len(pending), len(active), listed(pending, ", "))
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonFullyAppliedSuccess, "All works have been successfully applied."
	}
	return c, true
}

// shorten cuts a Work's error so that the condition naming several stays
// readable and within the API's limit (maxListed of them fit many times).
// It keeps enough for the explanation the execution controller puts first
// (e.g. which RBAC objects a cluster refused and how to fix it).
func shorten(s string) string {
	const max = 512
	if len(s) <= max {
		return s
	}
	return s[:max-3] + "..."
}

func listed(items []string, sep string) string {
	if len(items) <= maxListed {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:maxListed], sep) + fmt.Sprintf("%sand %d more", sep, len(items)-maxListed)
}
