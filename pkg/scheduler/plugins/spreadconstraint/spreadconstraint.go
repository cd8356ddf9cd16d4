// Package spreadconstraint filters out clusters that cannot be counted in a
// spread constraint: spreading over regions says nothing about a cluster
// with no region, and letting such clusters in would make them one more
// "group" (the empty one) and satisfy minGroups with clusters of unknown
// topology.
//
// Static weights ignore spread constraints (docs/scheduling.md), so the
// filter does too: a statically weighted placement must not lose clusters to
// a constraint that will not be applied.
package spreadconstraint

import (
	"context"
	"encoding/json"
	"fmt"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "SpreadConstraint"

const stateKey framework.StateKey = Name

// SpreadConstraint is the filter.
type SpreadConstraint struct{}

var (
	_ framework.PreFilterPlugin = (*SpreadConstraint)(nil)
	_ framework.FilterPlugin    = (*SpreadConstraint)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &SpreadConstraint{}, nil
}

// Name returns the plugin name.
func (*SpreadConstraint) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter rejects, per constraint, the clusters without the field or label
// it groups by ("cluster" needs nothing: every cluster has a name).
func (*SpreadConstraint) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	p := w.Placement
	if p == nil || len(p.SpreadConstraints) == 0 || placement.StaticWeights(p) != nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &cycleState{}
	n := state.Snapshot().Len()
	missing := func(have framework.ClusterSet, reason string) {
		have.Invert(n)
		s.verdicts = append(s.verdicts, framework.Verdict{Reject: have, Status: framework.NewStatus(framework.Unschedulable, reason)})
	}
	for _, c := range p.SpreadConstraints {
		switch {
		case c.SpreadByLabel != "":
			missing(state.WithLabel(c.SpreadByLabel), fmt.Sprintf("cluster has no label %q to spread by", c.SpreadByLabel))
		case c.SpreadByField == policyv1alpha1.SpreadByFieldProvider, c.SpreadByField == policyv1alpha1.SpreadByFieldRegion,
			c.SpreadByField == policyv1alpha1.SpreadByFieldZone:
			missing(state.WithField(string(c.SpreadByField)), fmt.Sprintf("cluster has no %s to spread by", c.SpreadByField))
		}
	}
	if len(s.verdicts) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return &framework.PreFilterResult{Verdicts: s.verdicts}, nil
}

// Filter rejects a cluster missing a field or label to spread by.
func (*SpreadConstraint) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}
