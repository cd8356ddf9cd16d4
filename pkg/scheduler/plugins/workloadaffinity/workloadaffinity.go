// Package workloadaffinity places a workload relative to the other
// workloads of its groups (placement.workloadAffinity, as in Karmada): with
// the members of its affinity group, apart from the members of its
// anti-affinity group.
//
// The members and the clusters they run on come with the workload
// (framework.Workload.AffinityGroup and AntiAffinityGroup): the scheduling
// controller looks them up in an index of its cache, `shepherd plan` in its
// input, so that this filter is a pure function of the cycle's input.
//
// Like Karmada, the filter never takes a workload off a cluster it runs on:
// held clusters pass, as they do for taints. Moving a workload because a
// peer moved is a reschedule's decision, not a side effect of another
// workload's placement.
package workloadaffinity

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "WorkloadAffinity"

const stateKey framework.StateKey = Name

// Bounds of what a reason lists, so that a large group does not blow up
// the binding's condition and decisions.
const (
	maxPeers    = 3
	maxClusters = 5
)

// WorkloadAffinity is the filter.
type WorkloadAffinity struct{}

var (
	_ framework.PreFilterPlugin = (*WorkloadAffinity)(nil)
	_ framework.FilterPlugin    = (*WorkloadAffinity)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &WorkloadAffinity{}, nil
}

// Name returns the plugin name.
func (*WorkloadAffinity) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter turns the groups into verdicts over the whole fleet: a group
// has few members, each on a handful of clusters, so the sets are built
// from the members' cluster names once and no cluster is visited.
func (*WorkloadAffinity) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	var verdicts framework.Verdicts
	if g := w.AffinityGroup; g != nil {
		if v, ok := affinity(state, g); ok {
			verdicts = append(verdicts, v)
		}
	}
	if g := w.AntiAffinityGroup; g != nil {
		verdicts = append(verdicts, antiAffinity(state, g)...)
	}
	if len(verdicts) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, &cycleState{verdicts: verdicts})
	return &framework.PreFilterResult{Verdicts: verdicts}, nil
}

// Filter rejects a cluster the groups rule out.
func (*WorkloadAffinity) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}

// affinity keeps the workload on the clusters every placed member of g runs
// on. Members not placed yet do not count: the first member placed decides
// where the group goes, the ones after it follow. When those clusters
// cannot take the workload (full, tainted, not matching its own cluster
// affinity) it is unschedulable; it never spills elsewhere, which would
// split the group for good.
func affinity(state *framework.CycleState, g *framework.PeerGroup) (framework.Verdict, bool) {
	snap := state.Snapshot()
	var (
		allowed framework.ClusterSet
		placed  []framework.Peer
	)
	for _, p := range g.Peers {
		if len(p.Clusters) == 0 {
			continue
		}
		placed = append(placed, p)
		on := clustersOf(state, snap, p.Clusters)
		if allowed == nil {
			allowed = on
		} else {
			allowed.And(on)
		}
	}
	if placed == nil {
		return framework.Verdict{}, false
	}
	reject := state.AllClusters()
	reject.AndNot(allowed)
	reject.AndNot(state.Held())
	if reject.IsEmpty() {
		return framework.Verdict{}, false
	}
	var reason string
	if allowed.IsEmpty() {
		reason = fmt.Sprintf("affinity group %q: its placed members share no cluster (%s)", g.Name, describePeers(placed))
	} else {
		reason = fmt.Sprintf("not a cluster of affinity group %q (%s)", g.Name, describePeers(placed))
	}
	return framework.Verdict{Reject: reject, Status: framework.NewStatus(framework.Unschedulable, reason)}, true
}

// antiAffinity keeps the workload off the clusters any member of g runs on,
// one verdict per member in name order, so each rejected cluster names the
// first member found there.
func antiAffinity(state *framework.CycleState, g *framework.PeerGroup) framework.Verdicts {
	snap := state.Snapshot()
	var verdicts framework.Verdicts
	taken := state.NewClusterSet()
	taken.Copy(state.Held())
	for _, p := range g.Peers {
		reject := clustersOf(state, snap, p.Clusters)
		reject.AndNot(taken)
		if reject.IsEmpty() {
			continue
		}
		taken.Or(reject)
		reason := fmt.Sprintf("anti-affinity group %q: %s", g.Name, describePeer(p))
		verdicts = append(verdicts, framework.Verdict{Reject: reject, Status: framework.NewStatus(framework.Unschedulable, reason)})
	}
	return verdicts
}

// clustersOf is the set of the named clusters that are in the snapshot.
func clustersOf(state *framework.CycleState, snap *framework.Snapshot, names []string) framework.ClusterSet {
	set := state.NewClusterSet()
	for _, n := range names {
		if i, ok := snap.Index(n); ok {
			set.Add(i)
		}
	}
	return set
}

// describePeers lists the first members and where they run.
func describePeers(peers []framework.Peer) string {
	parts := make([]string, 0, min(len(peers), maxPeers)+1)
	for i, p := range peers {
		if i == maxPeers {
			parts = append(parts, fmt.Sprintf("and %d more", len(peers)-maxPeers))
			break
		}
		parts = append(parts, describePeer(p))
	}
	return strings.Join(parts, "; ")
}

// describePeer says where a member runs: "Deployment/web runs on m1, m2".
func describePeer(p framework.Peer) string {
	shown := p.Clusters[:min(len(p.Clusters), maxClusters)]
	s := p.Name + " runs on " + strings.Join(shown, ", ")
	if n := len(p.Clusters) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}
