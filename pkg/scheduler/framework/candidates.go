package framework

import (
	"fmt"
	"sort"

	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// weightRule is a compiled static weight rule.
type weightRule struct {
	clusters ClusterSet
	weight   int64
}

// compileWeights compiles the static weight rules of the placement.
func (b *buffers) compileWeights(state *CycleState, w *Workload) error {
	for i, rule := range placement.StaticWeights(w.Placement) {
		set, err := state.SelectAffinity(&rule.TargetCluster)
		if err != nil {
			return fmt.Errorf("staticWeightList[%d]: %w", i, err)
		}
		b.weights = append(b.weights, weightRule{clusters: set, weight: rule.Weight})
	}
	return nil
}

// compileTiers compiles the overflow tiers of the term in force: tiers[0]
// holds the clusters of the term's own affinity, tiers[k] those of its k-th
// overflowAffinity not in an earlier tier (a cluster belongs to the first
// tier naming it). Nothing when overflow does not apply.
func (b *buffers) compileTiers(state *CycleState, w *Workload) error {
	term := state.Term()
	if !term.OverflowApplies(w) {
		return nil
	}
	seen, err := state.SelectAffinity(term.Affinity)
	if err != nil {
		return err
	}
	b.tiers = append(b.tiers, seen)
	for k, aff := range term.Overflow {
		set, err := state.SelectAffinity(aff)
		if err != nil {
			return fmt.Errorf("overflowAffinities[%d]: %w", k, err)
		}
		set.AndNot(seen)
		next := state.NewClusterSet()
		next.Copy(seen)
		next.Or(set)
		b.tiers, seen = append(b.tiers, set), next
	}
	return nil
}

// previousFrom returns the previous targets from snapshot index idx on.
func (s *CycleState) previousFrom(idx int32) []previousTarget {
	k := sort.Search(len(s.previous), func(k int) bool { return s.previous[k].index >= idx })
	return s.previous[k:]
}

// fillCandidate writes a feasible cluster as a core.Candidate (all but the
// score) in place (a candidate is over 100 bytes and there is one per
// feasible cluster, so copies show): how many replicas fit, the static
// weight (the largest of the rules it matches) and what the workload has
// there now. Clusters come in index order, and so do the previous targets:
// prev is walked along and returned.
func (b *buffers) fillCandidate(cand *core.Candidate, state *CycleState, ci *ClusterInfo, prev []previousTarget) []previousTarget {
	idx := ci.index
	*cand = core.Candidate{
		Name:      ci.Name,
		Provider:  ci.Provider,
		Region:    ci.Region,
		Zone:      ci.Zone,
		Labels:    ci.Labels,
		Available: state.Fit(ci),
		Held:      state.held.Has(idx),
	}
	for _, r := range b.weights {
		if r.weight > cand.StaticWeight && r.clusters.Has(idx) {
			cand.StaticWeight = r.weight
		}
	}
	for k, set := range b.tiers {
		if set.Has(idx) {
			cand.Tier = int32(k)
			break
		}
	}
	for len(prev) > 0 && int(prev[0].index) < idx {
		prev = prev[1:]
	}
	if len(prev) > 0 && int(prev[0].index) == idx {
		cand.Previous = prev[0].replicas
	}
	return prev
}
