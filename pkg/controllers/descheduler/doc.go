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
//   - A gang (spec.components: a workload of several pod templates, placed
//     whole) is never lowered in part, whatever its placement: it is moved
//     off the cluster whole (gang.go), as failover evicts
//     (bindingutil.Evict): the target becomes Unscheduled, so the
//     scheduler places the gang again; the eviction history (reason
//     GangUnschedulable) keeps the cluster out of the scheduler's choice
//     for the block window (the ClusterEviction filter); a graceful
//     eviction task keeps the old copy until the gang is Healthy on its
//     new clusters or the grace period ends. The condition's reason is
//     then GangMoved, the event GangDescheduled.
//   - A gang whose components the scheduler divided
//     (spec.dividedComponents) runs its divisible components' replicas in
//     several clusters, apart from the others: they are divided replicas.
//     When every unschedulable pod a cluster reports is of a divisible
//     component, each one's share there is lowered by its Pending pods
//     (the condition's reason Moved), and the scheduler's Steady cycle
//     places them again by room; the head stays. A pending head, or pods
//     the cluster does not tell apart by component, move that cluster's
//     copy whole as any gang's (gang.go).
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
// The lowered (or evicted) targets and workv1alpha1.AnnotationDescheduledAt
// in one spec patch with an optimistic lock; the ReplicasDescheduled condition; events
// ReplicasDescheduled (GangDescheduled) on the binding and its template;
// the metrics shepherd_descheduler_replicas_moved_total and
// shepherd_descheduler_gangs_moved_total.
package descheduler
