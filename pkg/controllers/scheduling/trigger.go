package scheduling

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Trigger says why a binding is scheduled.
type Trigger string

// Triggers, in the order Decide checks them.
const (
	// TriggerNone: nothing changed; the binding keeps its placement.
	TriggerNone Trigger = ""
	// TriggerReschedule: spec.rescheduleTriggeredAt is later than
	// status.lastScheduledTime; the cycle is Fresh (fallback affinity
	// terms restart from the first).
	TriggerReschedule Trigger = "Reschedule"
	// TriggerNew: the scheduler never placed the binding.
	TriggerNew Trigger = "New"
	// TriggerChanged: replicas, placement or the targets changed since the
	// scheduler last placed the binding (the targets change when failover
	// evicts a cluster, or a person edits them).
	TriggerChanged Trigger = "Changed"
	// TriggerRetry: the last attempt did not succeed.
	TriggerRetry Trigger = "Retry"
	// TriggerClusterGone: a target cluster was deleted or is being deleted.
	TriggerClusterGone Trigger = "ClusterGone"
	// TriggerFleetChanged: the placement takes every eligible cluster, so
	// the fleet is checked for clusters that became eligible; they are
	// added and nothing else moves.
	TriggerFleetChanged Trigger = "FleetChanged"
	// TriggerOverflow: the affinity term in force has overflowAffinities,
	// so the fleet is checked for room returning on earlier tiers; replicas
	// move back to it and nothing else moves.
	TriggerOverflow Trigger = "Overflow"
)

// Decide says whether and why b must be scheduled on snap.
//
// Only what the scheduler acts on counts: a template edit that changes
// neither replicas nor placement (the detector then only bumps
// spec.resource.resourceVersion, and the generation with it), a selected
// cluster turning NotReady (failover's business) and capacity changes
// leave the binding alone, and so does a restart of the scheduler, since
// every input is read from the binding and the fleet. An unclaimed binding
// (workv1alpha1.Unclaimed) that was placed keeps its placement whatever
// changes.
func Decide(b workv1alpha1.BindingObject, snap *framework.Snapshot) Trigger {
	spec, status := b.GetBindingSpec(), b.GetBindingStatus()
	hash := b.GetAnnotations()[workv1alpha1.AnnotationScheduledHash]
	switch {
	case hash != "" && workv1alpha1.Unclaimed(status):
		// No policy governs the template any longer: the binding keeps
		// the placement it has until a policy claims it again.
		return TriggerNone
	case rescheduleRequested(b):
		return TriggerReschedule
	case hash == "":
		return TriggerNew
	case hash != SchedulingHash(spec):
		return TriggerChanged
	case !meta.IsStatusConditionTrue(status.Conditions, workv1alpha1.ConditionScheduled):
		return TriggerRetry
	case targetClusterGone(spec.Clusters, snap):
		return TriggerClusterGone
	case placement.PlacesEverywhere(spec):
		return TriggerFleetChanged
	case placement.Overflows(spec, status):
		return TriggerOverflow
	}
	return TriggerNone
}

func rescheduleRequested(b workv1alpha1.BindingObject) bool {
	t := b.GetBindingSpec().RescheduleTriggeredAt
	return t != nil && !placement.RescheduleServed(b, *t)
}

// targetClusterGone reports whether an active target's cluster left the
// fleet or is leaving it.
func targetClusterGone(targets []workv1alpha1.TargetCluster, snap *framework.Snapshot) bool {
	for _, t := range targets {
		if !bindingutil.IsActive(t) {
			continue
		}
		i, ok := snap.Index(t.Name)
		if !ok || snap.At(i).Deleting {
			return true
		}
	}
	return false
}

// hashInput is what SchedulingHash covers.
type hashInput struct {
	Replicas  int32                     `json:"replicas"`
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`
	Targets   []hashTarget              `json:"targets,omitempty"`
	// Groups: a template joining or leaving a workload affinity group is
	// placed again (omitted when none, so that older hashes still hold).
	Groups *workv1alpha1.WorkloadAffinityGroups `json:"groups,omitempty"`
	// Components: a gang whose parts change (a worker group scaled, a
	// request raised) is placed again; omitted when none, so that the
	// hashes of every other workload still hold.
	Components []workv1alpha1.Component `json:"components,omitempty"`
	// Division: the head cluster of a workload whose components were
	// divided, written with the targets (omitted when placed whole).
	Division *workv1alpha1.DividedComponents `json:"division,omitempty"`
}

type hashTarget struct {
	Name       string                         `json:"name"`
	Replicas   int32                          `json:"replicas"`
	Components []workv1alpha1.TargetComponent `json:"components,omitempty"`
}

// SchedulingHash digests what scheduling depends on and produces:
// replicas, components, placement, and the active targets (names,
// replicas and components; not
// their state, which the binding controller moves, nor the Unscheduled
// ones it removes). encoding/json writes struct fields in order and map
// keys sorted, so equal inputs give equal hashes.
func SchedulingHash(spec *workv1alpha1.BindingSpec) string {
	in := hashInput{Replicas: spec.Replicas, Placement: spec.Placement, Groups: spec.WorkloadAffinityGroups, Components: spec.Components, Division: spec.DividedComponents}
	for _, t := range spec.Clusters {
		if bindingutil.IsActive(t) {
			in.Targets = append(in.Targets, hashTarget{Name: t.Name, Replicas: t.Replicas, Components: t.Components})
		}
	}
	slices.SortFunc(in.Targets, func(a, b hashTarget) int { return cmp.Compare(a.Name, b.Name) })
	data, err := json.Marshal(in)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// inputsChanged reports whether an update of a binding may need the
// scheduler: what the hash covers, the reschedule request, the scheduler
// name or the hash annotation changed, or the binding lost or regained
// its policy (workv1alpha1.Unclaimed). Writes of the detector that only
// bump spec.resource.resourceVersion, state moves by the binding
// controller and every other status write fail this test, so none of them
// (including the scheduler's own status writes) wakes the scheduler.
func inputsChanged(old, new workv1alpha1.BindingObject) bool {
	o, n := old.GetBindingSpec(), new.GetBindingSpec()
	return SchedulingHash(o) != SchedulingHash(n) ||
		!timeEqual(o.RescheduleTriggeredAt, n.RescheduleTriggeredAt) ||
		o.SchedulerName != n.SchedulerName ||
		old.GetAnnotations()[workv1alpha1.AnnotationScheduledHash] != new.GetAnnotations()[workv1alpha1.AnnotationScheduledHash] ||
		workv1alpha1.Unclaimed(old.GetBindingStatus()) != workv1alpha1.Unclaimed(new.GetBindingStatus())
}

func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}
