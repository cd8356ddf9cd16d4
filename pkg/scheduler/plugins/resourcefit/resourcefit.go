// Package resourcefit filters out clusters without room for the workload.
//
// How much room is needed depends on how replicas are assigned, which the
// assignment strategy of package core says (its Shape):
//   - Duplicated: every selected cluster runs all replicas, so a cluster
//     needs room for all of them; otherwise it would run a partial copy.
//   - Divided by capacity (Aggregated, dynamic weights): replicas are split
//     across clusters, so a cluster is useful as soon as one replica fits.
//     Whether the selected clusters together hold all replicas is the
//     assignment's question (core sees each cluster's room), not a
//     per-cluster one; requiring room for all replicas here would rule out
//     every cluster of a workload that only fits spread out.
//   - Divided by static or equal weights: the weights are the user's
//     statement of where replicas go, so the filter steps aside and the
//     strategy checks each share against the cluster's room: a share that
//     does not fit makes the workload Unschedulable, naming the cluster,
//     rather than a silently different split.
//
// The replicas the workload already runs on a cluster count as room there:
// they hold resources the cluster reports as allocated, and a full cluster
// must not lose a workload it runs just because it is full.
package resourcefit

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "ResourceFit"

const stateKey framework.StateKey = Name

// ResourceFit is the filter.
type ResourceFit struct{}

var (
	_ framework.PreFilterPlugin = (*ResourceFit)(nil)
	_ framework.FilterPlugin    = (*ResourceFit)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &ResourceFit{}, nil
}

// Name returns the plugin name.
func (*ResourceFit) Name() string { return Name }

type shortage struct {
	resource corev1.ResourceName
	status   *framework.Status
}

type cycleState struct {
	need int64
	// shortages has one status per resource that can be the limiting one.
	shortages []shortage
}

// PreFilter sets how many replicas must fit and prepares one status per
// resource that can run short.
//
// The check is arithmetic per cluster, so there are no fleet-wide verdicts:
// the framework calls Filter on the clusters the other filters left.
func (*ResourceFit) PreFilter(_ context.Context, state *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	if w.Replicas == 0 || w.Request.IsZero() {
		return nil, framework.NewStatus(framework.Skip) // nothing to fit, or no resource model
	}
	shape := strategyShape(w)
	if shape.Divided && !shape.Capacity {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &cycleState{need: 1}
	// The replica count stays out of the reason: clusters (and workloads)
	// short of the same resource should aggregate under one reason.
	what := "one replica"
	if !shape.Divided && w.Replicas > 1 {
		s.need = int64(w.Replicas)
		what = "all replicas"
	}
	add := func(r corev1.ResourceName) {
		s.shortages = append(s.shortages, shortage{resource: r,
			status: framework.NewStatus(framework.Unschedulable, fmt.Sprintf("insufficient %s for %s", r, what))})
	}
	add(framework.ResourcePods)
	add(framework.ResourceNodeRoom)
	if w.Request.MilliCPU > 0 {
		add(framework.ResourceCPU)
	}
	if w.Request.Memory > 0 {
		add(framework.ResourceMemory)
	}
	for _, sc := range w.Request.Scalars {
		add(sc.Name)
	}
	state.Write(stateKey, s)
	return nil, nil
}

// strategyShape is the Shape of the strategy that will assign w's replicas
// (the zero Shape, Duplicated's, for strategies declaring none).
func strategyShape(w *framework.Workload) core.Shape {
	st, ok := core.Lookup(placement.StrategyName(w.Placement, w.Replicas))
	if !ok {
		return core.Shape{}
	}
	if sh, ok := st.(core.Shaped); ok {
		return sh.Shape()
	}
	return core.Shape{}
}

// Filter rejects a cluster where fewer replicas fit than needed, naming the
// resource that runs out first.
func (*ResourceFit) Filter(_ context.Context, state *framework.CycleState, w *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	s := state.Read(stateKey).(*cycleState)
	if state.Fit(ci)+int64(state.Previous(ci)) >= s.need {
		return nil
	}
	_, limiting := ci.Fit(&w.Request)
	for _, sh := range s.shortages {
		if sh.resource == limiting {
			return sh.status
		}
	}
	return s.shortages[0].status
}
