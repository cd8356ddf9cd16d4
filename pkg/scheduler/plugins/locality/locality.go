// Package locality scores clusters that already hold the workload 100 and
// the others 0, so that an unchanged workload stays where it is. Moving a
// running workload costs a rollout, and cluster capacity or preference
// scores change all the time; without this plugin every such change would
// reshuffle placements (the "ignore during execution" rule of a fleet
// scheduler).
//
// A reschedule (core.Fresh) asks for a placement computed from scratch, so
// the plugin steps aside then, as it does when nothing is held.
package locality

import (
	"context"
	"encoding/json"

	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "Locality"

// Locality is the score plugin.
type Locality struct{}

var (
	_ framework.PreScorePlugin = (*Locality)(nil)
	_ framework.ScorePlugin    = (*Locality)(nil)
)

// New builds the plugin. It has nothing to tune (its score weight is the
// profile's), so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &Locality{}, nil
}

// Name returns the plugin name.
func (*Locality) Name() string { return Name }

// PreScore skips fresh placements and workloads held nowhere: every cluster
// would score 0.
func (*Locality) PreScore(_ context.Context, state *framework.CycleState, w *framework.Workload) *framework.Status {
	if w.Mode == core.Fresh || state.Held().Count() == 0 {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Score is 100 for a cluster holding the workload, 0 otherwise.
func (*Locality) Score(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) (int64, *framework.Status) {
	if state.Held().Has(ci.Index()) {
		return framework.MaxClusterScore, nil
	}
	return framework.MinClusterScore, nil
}

// ScoreExtensions returns nil: scores are already 0 or 100.
func (*Locality) ScoreExtensions() framework.ScoreExtensions { return nil }
