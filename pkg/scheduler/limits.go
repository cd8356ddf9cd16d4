package scheduler

import (
	"fmt"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Limits bound what one placement may send to the fleet, so that a typo
// (or an attack) like replicas: 2147483647 is refused before any member
// starts a pod. Zero means no limit. A policy's placement.replicaLimits
// can lower them for its templates, never raise them.
type Limits struct {
	// MaxReplicasPerWorkload bounds a workload's replicas.
	MaxReplicasPerWorkload int32
	// MaxReplicasPerCluster bounds the replicas a placement sends to one
	// cluster (for Duplicated, all of them to every cluster).
	MaxReplicasPerCluster int32
}

// Defaults of the controllers' limits: Kubernetes' documented limit of
// pods per cluster, and ten times that per workload.
const (
	DefaultMaxReplicasPerCluster  = 150_000
	DefaultMaxReplicasPerWorkload = 1_500_000
)

// ConstraintReplicaLimit names the limit in an unschedulable reason.
const ConstraintReplicaLimit = "replicaLimit"

func limitError(snap *framework.Snapshot, term, msg string) *UnschedulableError {
	n := snap.Len()
	return &UnschedulableError{Failures: []*FitError{{Term: term, NumClusters: n, NumFeasible: n, Constraint: ConstraintReplicaLimit, Message: msg}}}
}

// limit is one limit in force and where it comes from, for messages.
type limit struct {
	max    int32
	source string
}

// tightest is the lower of the controller's limit and the policy's, zero
// meaning none.
func tightest(controller int32, flag string, policy *int32, field string) limit {
	l := limit{max: controller, source: "the controller manager's " + flag}
	if policy != nil && *policy > 0 && (l.max <= 0 || *policy < l.max) {
		l = limit{max: *policy, source: "the policy's " + field}
	}
	return l
}

// inForce are the limits for w: the scheduler's, lowered by the policy's
// placement.replicaLimits.
func (l Limits) inForce(w *framework.Workload) (workload, cluster limit) {
	var pl *policyv1alpha1.ReplicaLimits
	if w.Placement != nil {
		pl = w.Placement.ReplicaLimits
	}
	if pl == nil {
		pl = &policyv1alpha1.ReplicaLimits{}
	}
	return tightest(l.MaxReplicasPerWorkload, "--max-replicas-per-workload", pl.MaxReplicas, "placement.replicaLimits.maxReplicas"),
		tightest(l.MaxReplicasPerCluster, "--max-replicas-per-cluster", pl.MaxReplicasPerCluster, "placement.replicaLimits.maxReplicasPerCluster")
}

// checkWorkload refuses a workload over the per-workload limit.
func (l Limits) checkWorkload(snap *framework.Snapshot, w *framework.Workload) error {
	if lim, _ := l.inForce(w); lim.max > 0 && w.Replicas > lim.max {
		return limitError(snap, "", fmt.Sprintf("%s: %d replicas are more than the %d a workload may have; lower spec.replicas (the limit is %s)",
			ConstraintReplicaLimit, w.Replicas, lim.max, lim.source))
	}
	return nil
}

// checkTargets refuses a placement that sends one cluster more than the
// per-cluster limit.
func (l Limits) checkTargets(snap *framework.Snapshot, w *framework.Workload, term string, targets []workv1alpha1.TargetCluster) error {
	_, lim := l.inForce(w)
	if lim.max <= 0 {
		return nil
	}
	for _, t := range targets {
		if t.Replicas > lim.max {
			return limitError(snap, term, fmt.Sprintf("%s: the placement sends %d replicas to cluster %s, more than the %d one cluster may get; lower spec.replicas or divide over more clusters (the limit is %s)",
				ConstraintReplicaLimit, t.Replicas, t.Name, lim.max, lim.source))
		}
	}
	return nil
}
