package core

import (
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// duplicated runs the whole workload on every selected cluster (also the
// placement of kinds without replicas, with 0 per target). Capacity was the
// filters' business, so there is nothing to divide or check, and Steady and
// Fresh agree: the targets are the selected clusters.
type duplicated struct{}

func (duplicated) Name() string { return placement.StrategyDuplicated }

// Assign gives each selected cluster req.Replicas.
func (duplicated) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	targets := make([]workv1alpha1.TargetCluster, len(selected))
	for i := range selected {
		targets[i] = workv1alpha1.TargetCluster{Name: selected[i].Name, Replicas: max(req.Replicas, 0)}
	}
	return targets, nil
}
