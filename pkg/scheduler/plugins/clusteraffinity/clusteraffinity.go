// Package clusteraffinity filters clusters by the placement's cluster
// affinity: clusterNames, exclude, labelSelector and fieldSelector, all of
// which must hold.
//
// With ordered fallback terms (placement.clusterAffinities) the framework
// runs one cycle per term and the term in force is in the CycleState; this
// plugin only ever looks at that one term, so fallback needs no special case
// here. A term's overflowAffinities admit their clusters too (for divided
// replicas); the framework records each cluster's overflow tier and core
// fills tiers in order.
package clusteraffinity

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ClusterAffinity"

const stateKey framework.StateKey = Name

// ClusterAffinity is the filter.
type ClusterAffinity struct{}

var (
	_ framework.PreFilterPlugin = (*ClusterAffinity)(nil)
	_ framework.FilterPlugin    = (*ClusterAffinity)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &ClusterAffinity{}, nil
}

// Name returns the plugin name.
func (*ClusterAffinity) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter compiles each set part of the term into a ClusterSet once; the
// parts are kept apart so that a rejected cluster says which one it fails.
//
// With overflowAffinities (for divided replicas), a cluster that fails the
// term but matches one of them is admitted too: core gives it replicas only
// once the term's own clusters are full.
func (*ClusterAffinity) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	term := state.Term()
	aff := term.Affinity
	if aff == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	suffix := ""
	if term.Name != "" {
		suffix = fmt.Sprintf(" (affinity term %q)", term.Name)
	}
	s := &cycleState{}
	n := state.Snapshot().Len()
	reject := func(set framework.ClusterSet, reason string) {
		s.verdicts = append(s.verdicts, framework.Verdict{Reject: set, Status: framework.NewStatus(framework.Unschedulable, reason+suffix)})
	}
	rejectOthers := func(admitted framework.ClusterSet, reason string) {
		admitted.Invert(n)
		reject(admitted, reason)
	}
	if len(aff.Exclude) > 0 {
		reject(state.SelectNames(aff.Exclude), "excluded by exclude")
	}
	if len(aff.ClusterNames) > 0 {
		rejectOthers(state.SelectNames(aff.ClusterNames), "not in clusterNames")
	}
	if aff.LabelSelector != nil {
		set, err := state.SelectLabels(aff.LabelSelector)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		rejectOthers(set, "with labels not matching the labelSelector")
	}
	if aff.FieldSelector != nil {
		set, err := state.SelectFields(aff.FieldSelector)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		rejectOthers(set, "with a provider, region or zone not matching the fieldSelector")
	}
	if term.OverflowApplies(w) && len(s.verdicts) > 0 {
		overflow := state.NewClusterSet()
		for k, aff := range term.Overflow {
			set, err := state.SelectAffinity(aff)
			if err != nil {
				return nil, framework.AsStatus(fmt.Errorf("overflowAffinities[%d]: %w", k, err))
			}
			overflow.Or(set)
		}
		for i := range s.verdicts {
			s.verdicts[i].Reject.AndNot(overflow)
			s.verdicts[i].Status = framework.NewStatus(framework.Unschedulable, s.verdicts[i].Status.Message()+", nor an overflowAffinity")
		}
	}
	if len(s.verdicts) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return &framework.PreFilterResult{Verdicts: s.verdicts}, nil
}

// Filter passes clusters admitted by every part of the term.
func (*ClusterAffinity) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}
