// Package failover moves workloads off clusters where they fail.
//
// Application failover: a binding whose policy sets
// failover.application is watched through its status.aggregatedStatus
// (written by the work status controller). A copy that has been Unhealthy
// since unhealthySince for longer than decisionConditions.tolerationSeconds
// (300 s by default) is evicted, provided the preconditions hold: with
// preConditions.healthyState: Healthy only a copy that was once Healthy
// (settled) fails over, and preConditions.delaySeconds holds failover back
// until that long after the copy's status was first collected. Unknown
// health never triggers failover.
//
// Cluster failover: a binding with an active target on a cluster tainted
// NoExecute (the cluster status controller adds one when a member stays
// not ready or unreachable; a user may add one) is evicted from that
// cluster unless placement.clusterTolerations tolerates the taint; a
// toleration with tolerationSeconds delays the eviction until that long
// after the taint's timeAdded. These evictions are rate-limited across all
// bindings, so a failing cluster does not move the whole fleet at once.
//
// Evicting a cluster marks its target Unscheduled, which changes the
// active targets and so makes the scheduler reschedule; appends
// spec.evictionHistory (the eviction filter keeps the cluster out for
// failover.application.blockPredecessorSeconds); and, unless the purge
// mode is Directly (or its former name Immediately), adds a graceful
// eviction task, which makes the binding controller keep the old copy's
// Work. The task goes when its purge mode allows: Gracefully (Graciously)
// once the workload is Healthy on every
// active target or the grace period ended; Never once a user confirms
// (spec.gracefulEvictionTasks[].confirmed, or `shepherd failover confirm`).
// While tasks remain, the binding's EvictionPending condition says why.
// History entries past the block window are pruned.
//
// Every clock is read from the API (unhealthySince, firstCollectedTime,
// the task's creationTimestamp, the taint's timeAdded, evictedAt), so a
// restart neither forgets nor restarts a countdown; the controller
// requeues a binding exactly when its next deadline falls due and never
// polls.
//
// Events: Evicted, EvictionCompleted, HistoryPruned on the binding.
// Metric: shepherd_failover_evictions_total{reason}.
package failover
