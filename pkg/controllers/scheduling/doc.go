// Package scheduling runs the scheduler (package scheduler) on bindings:
// one generic Reconciler per binding kind, sharing one fleet snapshot.
//
// # When a binding is scheduled
//
// Decide reads everything from the binding and the fleet, so restarts
// change nothing. A binding is scheduled when
//
//   - spec.rescheduleTriggeredAt was not served yet (RescheduleServed):
//     it is later than status.lastScheduledTime, or in the same second and
//     not the stamp recorded in workv1alpha1.AnnotationRescheduleObserved. A Fresh
//     cycle, fallback affinity terms restarting from the first; it records
//     the stamp it served in that annotation;
//   - it was never scheduled, or its last attempt failed;
//   - its replicas, placement, workload affinity groups or active targets differ from what the
//     scheduler last wrote. That is recorded as a hash in the annotation
//     workv1alpha1.AnnotationScheduledHash, written in the same patch as spec.clusters.
//     The generation is no use here: the detector bumps it on every
//     template edit (spec.resource.resourceVersion);
//   - an active target's cluster was deleted or is being deleted;
//   - its placement takes every eligible cluster (Duplicated, no bounded
//     spread; not a workload whose components are divided) and the fleet
//     changed: eligible clusters are then only added, nothing else moves.
//
// It is not scheduled for a template edit that changes neither replicas
// nor placement, a selected cluster turning NotReady (failover's
// business), capacity changes, or its own writes.
//
// # Writes
//
// A cycle writes at most one spec patch (spec.clusters, with
// spec.dividedComponents naming the head cluster of a workload whose
// components were divided, and the hash) and
// one status patch (lastScheduledTime, observedAffinityName, the capped
// schedulingDecisions and the Scheduled condition, whose message says why
// a workload whose placement asked to divide its components is placed
// whole), each skipped when it
// changes nothing, both with an optimistic lock since the binding
// controller moves target states in the same list. Targets leaving the
// placement become Unscheduled (the binding controller removes them once
// their Works are gone) and targets staying keep their state (see
// MergeTargets). The controller's predicate passes only updates that
// change scheduling inputs (inputsChanged), so neither its own status
// writes nor other controllers' writes wake it.
//
// Unschedulable bindings are retried with exponential back-off and at once
// when a cluster appears or changes in a way that may make it eligible.
// Events: Scheduled and FailedScheduling. Metrics:
// shepherd_scheduler_schedule_attempts_total{result},
// shepherd_scheduler_e2e_scheduling_duration_seconds{result} and
// shepherd_scheduler_snapshot_builds_total.
package scheduling
