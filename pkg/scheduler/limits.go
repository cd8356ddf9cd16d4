package scheduler

import (
	"fmt"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Limits bound what one placement may send to the fleet, so that a typo
// (or an attack) like replicas: 2147483647 is refused before any member
// starts a pod. Zero means no limit.
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

// checkWorkload refuses a workload over the per-workload limit.
func (l Limits) checkWorkload(snap *framework.Snapshot, w *framework.Workload) error {
	if l.MaxReplicasPerWorkload > 0 && w.Replicas > l.MaxReplicasPerWorkload {
		return limitError(snap, "", fmt.Sprintf("%s: %d replicas are more than the %d a workload may have; lower spec.replicas (the limit is the controller manager's --max-replicas-per-workload)",
			ConstraintReplicaLimit, w.Replicas, l.MaxReplicasPerWorkload))
	}
	return nil
}

// checkTargets refuses a placement that sends one cluster more than the
// per-cluster limit.
func (l Limits) checkTargets(snap *framework.Snapshot, term string, targets []workv1alpha1.TargetCluster) error {
	if l.MaxReplicasPerCluster <= 0 {
		return nil
	}
	for _, t := range targets {
		if t.Replicas > l.MaxReplicasPerCluster {
			return limitError(snap, term, fmt.Sprintf("%s: the placement sends %d replicas to cluster %s, more than the %d one cluster may get; lower spec.replicas or divide over more clusters (the limit is the controller manager's --max-replicas-per-cluster)",
				ConstraintReplicaLimit, t.Replicas, t.Name, l.MaxReplicasPerCluster))
		}
	}
	return nil
}
