// Package clustereviction keeps a workload off the clusters it was just
// evicted from. Without it, a workload failed over because a cluster broke
// would be scheduled straight back onto that cluster, and flap.
//
// Two sources block a cluster:
//   - a graceful eviction task: the old copy is still there, being drained;
//     placing the workload there again would fight the eviction;
//   - the eviction history, for the policy's
//     failover.application.blockPredecessorSeconds (600 s when unset; 0 blocks
//     until a RescheduleTask or a user clears the history).
//
// Time comes from the Workload (Now), never from the wall clock, so a cycle
// is reproducible.
package clustereviction

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ClusterEviction"

const stateKey framework.StateKey = Name

// ClusterEviction is the filter.
type ClusterEviction struct{}

var (
	_ framework.PreFilterPlugin = (*ClusterEviction)(nil)
	_ framework.FilterPlugin    = (*ClusterEviction)(nil)
)

// New builds the plugin. It takes no args: the block window is the
// policy's (blockPredecessorSeconds and its default), which the failover
// controller and the dashboard read too, so a plugin setting of it would
// make them disagree on when a cluster is blocked.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &ClusterEviction{}, nil
}

// Name returns the plugin name.
func (*ClusterEviction) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter works out which clusters are blocked and why: one verdict per
// blocked cluster (there are few), the first reason found winning.
func (*ClusterEviction) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	if len(w.GracefulEvictionTasks) == 0 && len(w.EvictionHistory) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	snap := state.Snapshot()
	s := &cycleState{}
	blocked := state.NewClusterSet()
	add := func(cluster, reason string) {
		i, ok := snap.Index(cluster)
		if !ok || blocked.Has(i) {
			return
		}
		blocked.Add(i)
		one := state.NewClusterSet()
		one.Add(i)
		s.verdicts = append(s.verdicts, framework.Verdict{Reject: one, Status: framework.NewStatus(framework.Unschedulable, reason)})
	}
	for _, task := range w.GracefulEvictionTasks {
		add(task.FromCluster, fmt.Sprintf("workload is being evicted from the cluster (%s)", task.Reason))
	}
	window := placement.BlockWindow(w.Failover)
	for _, h := range w.EvictionHistory {
		if window == 0 {
			add(h.ClusterName, fmt.Sprintf("workload was evicted from the cluster (%s); blocked until the eviction history is cleared", h.Reason))
			continue
		}
		if until := h.EvictedAt.Add(window); w.Now.Before(until) {
			add(h.ClusterName, fmt.Sprintf("workload was evicted from the cluster (%s); blocked for another %s",
				h.Reason, until.Sub(w.Now).Round(time.Second)))
		}
	}
	if len(s.verdicts) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return &framework.PreFilterResult{Verdicts: s.verdicts}, nil
}

// Filter rejects blocked clusters.
func (*ClusterEviction) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}
