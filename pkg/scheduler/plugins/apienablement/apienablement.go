// Package apienablement filters out clusters that do not serve the
// workload's API: applying a StatefulSet to a cluster without apps/v1
// StatefulSet (or a custom resource to a cluster without its CRD) can only
// fail.
package apienablement

import (
	"context"
	"encoding/json"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "APIEnablement"

const stateKey framework.StateKey = Name

// APIEnablement is the filter.
type APIEnablement struct{}

var (
	_ framework.PreFilterPlugin = (*APIEnablement)(nil)
	_ framework.FilterPlugin    = (*APIEnablement)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &APIEnablement{}, nil
}

// Name returns the plugin name.
func (*APIEnablement) Name() string { return Name }

type cycleState struct{ verdicts framework.Verdicts }

// PreFilter rejects, in one set, the clusters known not to serve the
// workload's "group/version/Kind": the snapshot keeps the set of clusters
// serving each API, so this costs a few word operations per cycle.
func (*APIEnablement) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	if w.Kind == "" {
		return nil, framework.NewStatus(framework.Skip)
	}
	key := w.APIKey()
	snap := state.Snapshot()
	serving := state.NewClusterSet()
	serving.Copy(snap.UnknownAPIClusters())
	if id, known := snap.APIID(key); known {
		serving.Or(snap.APIClusters(id))
	}
	serving.Invert(snap.Len())
	// A cluster the workload runs on is never dropped for an API missing
	// from its discovery (discovery that partly failed would otherwise
	// delete a running workload at the next scale): if the API is really
	// gone, the apply fails and says so.
	serving.AndNot(state.Held())
	s := &cycleState{verdicts: framework.Verdicts{{Reject: serving, Status: framework.NewStatus(framework.Unschedulable, "missing "+key)}}}
	state.Write(stateKey, s)
	return &framework.PreFilterResult{Verdicts: s.verdicts}, nil
}

// Filter passes clusters that serve the API.
//
// A cluster that reports no APIs at all is ambiguous: it may serve nothing
// or not have been looked at yet. Until the hub has probed it (Probed), the
// list is unknown and the cluster passes, so a newly joined cluster is not
// ruled out by a status that simply has not arrived; the apply would fail
// and be retried like any other. Once probed, an empty list means the
// cluster serves nothing we could place there.
func (*APIEnablement) Filter(_ context.Context, state *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return state.Read(stateKey).(*cycleState).verdicts.Filter(ci)
}
