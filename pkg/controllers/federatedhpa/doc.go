// Package federatedhpa scales a workload of the hub from the metrics of
// its pods in every member cluster it runs in, as a
// HorizontalPodAutoscaler scales a workload in one cluster (Karmada's
// FederatedHPA): it sets the template's spec.replicas, and the
// propagation policy divides them among the clusters.
//
// # What it decides (decide.go and behavior.go, pure)
//
//   - Per metric, the HorizontalPodAutoscaler's count: the ratio of the
//     measured value to the target, within a tolerance (10%) no change;
//     pods without metrics count as at their request (100%) on a
//     scale-down and idle on a scale-up, pods not ready (Pending, or not
//     ready by the CPU rule) are left out and count as idle on a
//     scale-up; the highest count over the metrics wins. Resource and
//     ContainerResource metrics come from the members' metrics.k8s.io,
//     Pods and Object metrics from their custom.metrics.k8s.io: a Pods
//     metric is averaged over every counted pod of every member; an
//     Object metric's values (one per member, each of its own copy of the
//     object) add up against an AverageValue target and are weighed by
//     the members' ready pods against a Value target. External metrics
//     are not read: no member's value is its share of the load.
//   - A member whose metrics are missing (for its running, ready pods)
//     or stale, or that cannot be reached, is left out of the average
//     (of every metric, or of the one it lacks) and named in the
//     ScalingActive condition and status.clusters[].excluded; its pods
//     count at the average of the others, and nothing scales down while
//     one is out (its load is unknown, never zero).
//   - Behavior: the stabilization window of the direction (scale-down
//     300 s by default), then the rate policies, then minReplicas and
//     maxReplicas, with the ScalingLimited condition's reasons.
//
// # What it writes (reconciler.go)
//
// The template's spec.replicas on the hub (a merge patch of that field
// alone, field manager shepherd-federatedhpa); the FederatedHPA's
// status; events SuccessfulRescale (its note says the count before and
// after, RescaleNote, so that the events tell the replica history; each
// relates to the target it scaled, so none folds into another's series),
// FailedRescale and FailedGetMetrics; the metrics
// shepherd_federatedhpa_{desired,current}_replicas and
// shepherd_federatedhpa_cluster_utilization.
package federatedhpa
