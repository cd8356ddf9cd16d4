package core

import (
	"fmt"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/apportion"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// staticWeight divides replicas by each cluster's StaticWeight, or equally
// when no selected cluster has a weight (no weightPreference, or no rule of
// the list matches: the design then uses every cluster with equal weight).
//
// A static weight is a declared ratio, so the division is recomputed from
// the weights alone every time, in Steady mode too, by Karmada's method
// (Webster, see Webster): the ratio holds after every scale, weight change,
// added or removed cluster, and a scale by one replica changes one cluster
// by one. The previous placement plays no part.
//
// Unlike Karmada, it never sends a cluster more replicas than fit there
// (Available + Previous): a share beyond that makes the workload
// Unschedulable, naming the cluster, and the previous placement stays.
// Clusters that report no capacity limit for the workload (it requests no
// resources) fit any share.
type staticWeight struct{}

func (staticWeight) Name() string { return placement.StrategyStaticWeight }

// Shape: divided; capacity is checked on the shares, not used to select.
func (staticWeight) Shape() Shape { return Shape{Divided: true} }

// Assign apportions by weight and checks each share against capacity.
func (staticWeight) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	cs := byName(selected)
	total := int64(max(req.Replicas, 0))
	shares := apportion.Webster(total, staticWeights(cs, staticWeighted(req.Placement)), apportion.TiesFor(req.TieSeed))
	for i, c := range cs {
		if room := capacity(c); shares[i] > room {
			return nil, &UnschedulableError{Constraint: "capacity", Message: fmt.Sprintf(
				"replicas: StaticWeight: the weights give cluster %s %d of %d replicas, but only %d fit there; "+
					"lower the replicas, change the weights, or divide by dynamicWeight: AvailableReplicas",
				c.Name, shares[i], total, room)}
		}
	}
	return targetsOf(cs, shares), nil
}

// staticWeights are the clusters' weights: their StaticWeight when the
// placement has a weight list, and 1 each without one or when no cluster
// has a positive weight.
func staticWeights(cs []*Candidate, list bool) []int64 {
	w := make([]int64, len(cs))
	weighted := false
	for i := range cs {
		if list {
			w[i] = max(cs[i].StaticWeight, 0)
		}
		weighted = weighted || w[i] > 0
	}
	if !weighted {
		for i := range w {
			w[i] = 1
		}
	}
	return w
}
