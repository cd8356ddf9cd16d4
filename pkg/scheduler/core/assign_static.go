package core

import workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"

func init() { Register(staticWeight{}) }

// staticWeight divides replicas by each cluster's StaticWeight, or equally
// when no selected cluster has a weight (no weightPreference, or no rule of
// the list matches: the design then uses every cluster with equal weight).
//
// As in Karmada it ignores capacity: the weights are the user's statement of
// where replicas go, and a cluster that cannot run its share shows that as
// pending pods rather than as a silently different split. Use dynamic
// weights to divide by what fits.
type staticWeight struct{}

func (staticWeight) Name() string { return StrategyStaticWeight }

// Shape: divided, capacity ignored.
func (staticWeight) Shape() Shape { return Shape{Divided: true} }

// Assign apportions by weight (largest remainder, ties by name); in Steady
// mode only the change in replicas is apportioned (see divide).
func (staticWeight) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	byWeight := func(cs []*Candidate, total int64) ([]int64, error) {
		return apportion(total, staticWeights(cs, staticWeighted(req.Placement))), nil
	}
	return divide(StrategyStaticWeight, selected, req, divider{fresh: byWeight, more: byWeight})
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
