// Package preferredaffinity scores clusters by the placement's preferred
// cluster affinities (a KubeFleet idea Karmada lacks): a cluster's raw score
// is the sum of the weights of the terms it matches, negative weights
// pushing clusters away, normalized min-max to 0..100 over the feasible
// clusters so the least preferred scores 0 and the most preferred 100.
//
// With no terms the plugin skips itself in PreScore instead of scoring every
// cluster 0: a constant column changes no ranking but would show up in
// every explanation as if preferences had been weighed.
package preferredaffinity

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "PreferredAffinity"

const stateKey framework.StateKey = Name

// PreferredAffinity is the score plugin.
type PreferredAffinity struct{}

var (
	_ framework.PreScorePlugin  = (*PreferredAffinity)(nil)
	_ framework.ScorePlugin     = (*PreferredAffinity)(nil)
	_ framework.ScoreExtensions = (*PreferredAffinity)(nil)
)

// New builds the plugin. It has nothing to tune (its score weight is the
// profile's), so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &PreferredAffinity{}, nil
}

// Name returns the plugin name.
func (*PreferredAffinity) Name() string { return Name }

type term struct {
	matches framework.ClusterSet
	weight  int64
}

type cycleState struct{ terms []term }

// PreScore compiles every term into a ClusterSet once.
func (*PreferredAffinity) PreScore(_ context.Context, state *framework.CycleState, w *framework.Workload) *framework.Status {
	if w.Placement == nil || len(w.Placement.PreferredClusterAffinities) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &cycleState{}
	for i := range w.Placement.PreferredClusterAffinities {
		pref := &w.Placement.PreferredClusterAffinities[i]
		set, err := state.SelectAffinity(&pref.Preference)
		if err != nil {
			return framework.AsStatus(fmt.Errorf("preferredClusterAffinities[%d]: %w", i, err))
		}
		s.terms = append(s.terms, term{matches: set, weight: int64(pref.Weight)})
	}
	state.Write(stateKey, s)
	return nil
}

// Score sums the weights of the matching terms.
func (*PreferredAffinity) Score(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) (int64, *framework.Status) {
	s := state.Read(stateKey).(*cycleState)
	var sum int64
	for _, t := range s.terms {
		if t.matches.Has(ci.Index()) {
			sum += t.weight
		}
	}
	return sum, nil
}

// ScoreExtensions returns the normalizer.
func (p *PreferredAffinity) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore maps min..max to 0..100 (all 0 when every cluster has the
// same sum).
func (*PreferredAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *framework.Workload, scores []framework.ClusterScore) *framework.Status {
	if len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	for i := range scores {
		if hi == lo {
			scores[i].Score = framework.MinClusterScore
		} else {
			scores[i].Score = (scores[i].Score - lo) * framework.MaxClusterScore / (hi - lo)
		}
	}
	return nil
}
