// Package capacity prefers clusters with more room for the workload: the
// more replicas still fit, the higher the score, relative to the cluster
// where most fit (100). Spreading load toward free capacity leaves headroom
// for scale-ups and failover everywhere.
package capacity

import (
	"context"
	"encoding/json"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "Capacity"

// Capacity is the score plugin.
type Capacity struct{}

var (
	_ framework.PreScorePlugin  = (*Capacity)(nil)
	_ framework.ScorePlugin     = (*Capacity)(nil)
	_ framework.ScoreExtensions = (*Capacity)(nil)
)

// New builds the plugin. It has nothing to tune (its score weight is the
// profile's), so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &Capacity{}, nil
}

// Name returns the plugin name.
func (*Capacity) Name() string { return Name }

// PreScore skips workloads that request nothing: any number of replicas
// fits anywhere, so capacity cannot tell clusters apart.
func (*Capacity) PreScore(_ context.Context, _ *framework.CycleState, w *framework.Workload) *framework.Status {
	if w.Request.IsZero() {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score is the number of replicas that fit (normalized later).
func (*Capacity) Score(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) (int64, *framework.Status) {
	return state.Fit(ci), nil
}

// ScoreExtensions returns the normalizer.
func (c *Capacity) ScoreExtensions() framework.ScoreExtensions { return c }

// NormalizeScore scales to 0..100 relative to the best cluster, rounding
// down; when nothing fits anywhere every cluster scores 0.
func (*Capacity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *framework.Workload, scores []framework.ClusterScore) *framework.Status {
	var best int64
	for _, s := range scores {
		best = max(best, s.Score)
	}
	if best == 0 {
		return nil
	}
	for i := range scores {
		// Fit caps at core.Unlimited (2^40), so the product cannot overflow.
		scores[i].Score = scores[i].Score * framework.MaxClusterScore / best
	}
	return nil
}
