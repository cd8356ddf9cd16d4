// Package descheduler moves replicas that stay Pending: replicas a
// member's own scheduler cannot place (pods Pending with PodScheduled=False,
// reason Unschedulable, as the work status controller counts them into
// aggregatedStatus[].unschedulableReplicas and unschedulableSince) for
// longer than a threshold are taken back from that member, so that the
// scheduler places them on clusters with room. Karmada's
// karmada-descheduler does the same (--unschedulable-threshold, 5m).
//
// # What it decides (decide.go, pure)
//
//   - Only Divided placements by dynamic weights or Aggregated move: the
//     target keeps replicas - unschedulable (never below 0), and the
//     binding's replicas stay, so the scheduler's Steady scale-up (an
//     active target's replicas changed) places the difference by free
//     room. Static weights, equal division and Duplicated say where
//     replicas go: the ReplicasDescheduled condition (False,
//     NotMovable) reports them, nothing moves.
//   - Nothing moves while a failover moves the workload (graceful
//     eviction tasks) or a RescheduleTask's stamp is pending.
//   - At most one move per binding per threshold
//     (workv1alpha1.AnnotationDescheduledAt), and a global rate limit over the hub.
//   - Running pods are never evicted: only the count of unschedulable pods
//     is taken back; the member's ReplicaSet controller deletes pods that
//     are not on a node first when it scales down.
//
// The threshold is the policy's replicaScheduling.unschedulableThresholdSeconds,
// else the controller manager's --unschedulable-threshold.
//
// # What it writes (reconciler.go)
//
// The lowered targets and workv1alpha1.AnnotationDescheduledAt in one spec patch with an
// optimistic lock; the ReplicasDescheduled condition; events
// ReplicasDescheduled on the binding and its template; the metric
// shepherd_descheduler_replicas_moved_total.
package descheduler
