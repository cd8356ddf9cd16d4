// Package tainttoleration keeps workloads off clusters whose NoSchedule or
// NoExecute taints the placement does not tolerate. Taints are how a
// cluster says "not for everyone" (maintenance, dedicated teams) and how the
// cluster status controller marks not-ready and unreachable clusters, so
// this filter is also what keeps new placements off failed clusters.
package tainttoleration

import (
	"context"
	"encoding/json"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "TaintToleration"

const stateKey framework.StateKey = Name

// TaintToleration is the filter.
type TaintToleration struct{}

var (
	_ framework.PreFilterPlugin = (*TaintToleration)(nil)
	_ framework.FilterPlugin    = (*TaintToleration)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &TaintToleration{}, nil
}

// Name returns the plugin name.
func (*TaintToleration) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter decides each distinct taint of the fleet once. A fleet has few
// distinct taints (maintenance, not-ready, a team's dedication) but may have
// thousands of tainted clusters; the snapshot keeps the set of clusters
// carrying each taint, so an untolerated taint rejects its set at once, with
// one status shared by all its clusters. A cluster with several untolerated
// taints reports the one the fleet saw first.
func (*TaintToleration) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	snap := state.Snapshot()
	var tolerations []corev1.Toleration
	if w.Placement != nil {
		tolerations = w.Placement.ClusterTolerations
	}
	s := &cycleState{}
	held := state.Held()
	for id := range snap.NumTaints() {
		taint := snap.Taint(framework.TaintID(id))
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue // PreferNoSchedule does not forbid anything
		}
		if tolerated(tolerations, taint) {
			continue
		}
		reject := snap.TaintClusters(framework.TaintID(id))
		if !held.IsEmpty() {
			// A taint keeps new placements off a cluster; it never takes
			// the workload off a cluster it runs on. That is failover's
			// job (NoExecute, with its tolerationSeconds, purge mode and
			// rate limit), which then marks the target Unscheduled.
			spared := state.NewClusterSet()
			spared.Copy(reject)
			spared.AndNot(held)
			reject = spared
		}
		if reject.IsEmpty() {
			continue
		}
		s.verdicts = append(s.verdicts, framework.Verdict{
			Reject: reject,
			Status: framework.NewStatus(framework.Unschedulable, "untolerated taint {"+taint.ToString()+"}"),
		})
	}
	if len(s.verdicts) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, s)
	return &framework.PreFilterResult{Verdicts: s.verdicts}, nil
}

// tolerated applies corev1.Toleration semantics: an empty key with Exists
// tolerates every taint, an empty effect matches every effect, Equal (or no
// operator) compares values. Comparison operators are off, as the API only
// allows Exists and Equal.
func tolerated(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, false) {
			return true
		}
	}
	return false
}

// Filter rejects a cluster with an untolerated taint.
func (*TaintToleration) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}
