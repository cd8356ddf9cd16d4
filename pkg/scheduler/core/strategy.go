package core

import (
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Strategy assigns replicas to the clusters selection chose. Implementations
// must be pure and deterministic. selected is read-only and in no particular
// order, so a strategy that needs one sorts it itself; the targets may come
// in any order (Schedule sorts them and takes the slice over).
type Strategy interface {
	Name() string
	Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error)
}

// Shape tells selection how a strategy uses the clusters it is given, so one
// search serves every strategy. The zero Shape is Duplicated's: every cluster
// the spread constraints allow, with no capacity requirement.
type Shape struct {
	// Divided strategies split Replicas over the clusters. A cluster given
	// none is not a target, so selection never picks more clusters than
	// there are replicas, and caps every minGroups at Replicas.
	Divided bool
	// Capacity strategies never give a cluster more replicas than fit there
	// (Available + Previous), so the selected clusters must fit them all and
	// selection stops adding clusters once they do.
	Capacity bool
	// Fewest asks selection for the fewest clusters that fit the replicas
	// instead of the best-scored ones in order (Aggregated).
	Fewest bool
}

// Shaped is implemented by strategies whose Shape is not the zero Shape.
type Shaped interface {
	Shape() Shape
}

// strategyTable is every strategy, in the order Strategies lists them: an
// explicit table rather than registration from init functions, so what
// exists is read in one place, and a fixed-size array, so Lookup (once per
// Schedule) allocates nothing.
func strategyTable() [4]Strategy {
	return [...]Strategy{duplicated{}, staticWeight{}, dynamicWeight{}, aggregated{}}
}

// Strategies returns the strategies, Duplicated first, then the divided
// ones from the plainest to the most constrained. The slice is the
// caller's: changing it changes nothing here.
func Strategies() []Strategy {
	t := strategyTable()
	return t[:]
}

// Lookup returns the strategy named name (see placement.StrategyName).
func Lookup(name string) (Strategy, bool) {
	for _, s := range strategyTable() {
		if s.Name() == name {
			return s, true
		}
	}
	return nil, false
}

// shapeOf returns s's Shape, the zero Shape when it declares none.
func shapeOf(s Strategy) Shape {
	if sh, ok := s.(Shaped); ok {
		return sh.Shape()
	}
	return Shape{}
}

// staticWeighted reports whether p divides by a static weight list, which
// ignores spread constraints (a constraint of the design: the list already
// says where replicas go).
func staticWeighted(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.WeightPreference != nil &&
		len(p.ReplicaScheduling.WeightPreference.StaticWeightList) > 0
}
