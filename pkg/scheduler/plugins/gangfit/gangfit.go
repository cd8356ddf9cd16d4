// Package gangfit keeps a workload made of several pod templates (a gang:
// a RayCluster's head and worker groups, a TFJob's chief and workers) off
// clusters that cannot run all of it at once.
//
// Such a workload is placed whole: every selected cluster gets the whole
// object and must run every replica of every component, or the part that
// does not fit sits Pending while the parts that do hold their room for
// nothing (a Ray head without its workers, a training job one worker
// short). So a cluster passes only when the whole gang fits, node by node,
// in the room left after the replicas in flight (the snapshot the
// scheduler is given already has them taken out):
//
//   - Components are taken in the order the interpreter lists them (fixed
//     roles first, as their operators start them), each with
//     ClusterInfo.Take, the way the member's scheduler spreads pods. Room
//     the first ones take is gone for the next ones, and spreading can
//     leave no one node with room for a large pod, so the order counts as
//     it does in the member.
//   - A replica fits only on one node: room summed over several nodes does
//     not hold it. A cluster without a node model is judged by its summed
//     room (Available).
//   - On a cluster that already runs the gang, only the replicas a
//     component gains there must fit: those it runs hold room the cluster
//     reports as used (a target placed before its components were known
//     runs all of them), so a full cluster never loses a gang it runs.
//
// The reason names the first component that does not fit and how many of
// its replicas do, so a user sees which part of the gang to shrink.
//
// A gang whose placement divides its components (Workload.DivideComponents)
// is not filtered here: no one cluster needs to hold it whole. The
// scheduler places its head and divides the rest itself, taking each part
// from the room with Take, the same rule as this filter's.
package gangfit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Name of the plugin.
const Name = "GangFit"

// GangFit is the filter.
type GangFit struct{}

var (
	_ framework.PreFilterPlugin = (*GangFit)(nil)
	_ framework.FilterPlugin    = (*GangFit)(nil)
)

// New builds the plugin. It has nothing to tune, so it takes no args.
func New(args json.RawMessage) (framework.Plugin, error) {
	if err := framework.NoArgs(args); err != nil {
		return nil, err
	}
	return &GangFit{}, nil
}

// Name returns the plugin name.
func (*GangFit) Name() string { return Name }

// PreFilter skips every workload that is not a gang asking for resources
// (a component that requests nothing has no resource model, and capacity
// must not decide where it goes, as for ResourceFit), and a gang whose
// components are divided (the scheduler fits its parts itself).
func (*GangFit) PreFilter(_ context.Context, _ *framework.CycleState, w *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	if w.DivideComponents {
		return nil, skip
	}
	for i := range w.Components {
		if c := &w.Components[i]; c.Replicas > 0 && !c.Request.IsZero() {
			return nil, nil
		}
	}
	return nil, skip
}

// skip is shared: statuses are immutable, and almost every workload is not
// a gang, so skipping it allocates nothing.
var skip = framework.NewStatus(framework.Skip)

// Filter takes the gang's components in order from ci's room and rejects
// the cluster at the first one whose replicas do not all fit. The status
// is built only for a rejected cluster: it names the cluster, so no two
// clusters share one.
func (*GangFit) Filter(_ context.Context, _ *framework.CycleState, w *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	if _, s, ok := Take(*ci, w.Components, w.HeldComponents(ci.Name)); !ok {
		return framework.NewStatus(framework.Unschedulable, s.String())
	}
	return nil
}

// Short says which component of a gang does not fit on a cluster.
type Short struct {
	Cluster   string
	Component string
	// Need is how many of its replicas had to fit, Fit how many do.
	Need, Fit int64
	Request   framework.Resources
	// Nodes is true when the cluster reports its node model.
	Nodes bool
}

// String is the reason: `component "workers" (4 × cpu 4, memory 8Gi) does
// not fit: 2 of 4 fit on the nodes of member2`.
func (s Short) String() string {
	where := "on the nodes of"
	if !s.Nodes {
		where = "in the free room of" // no node model: the sums alone
	}
	return fmt.Sprintf("component %q (%d × %s) does not fit: %d of %d fit %s %s",
		s.Component, s.Need, Describe(&s.Request), s.Fit, s.Need, where, s.Cluster)
}

// Take takes the components cs in order from ci's room, each for the
// replicas it gains over what the cluster holds of it already (held, by
// name: those hold room the cluster reports as used), and returns the
// room left; ok is false at the first component whose replicas do not all
// fit, which Short names. ci is a copy: taking room from it changes
// nothing the caller holds (ClusterInfo.Take copies what it changes).
func Take(ci framework.ClusterInfo, cs []framework.Component, held map[string]int32) (framework.ClusterInfo, Short, bool) {
	for i := range cs {
		c := &cs[i]
		need := int64(c.Replicas) - int64(held[c.Name])
		if need <= 0 || c.Request.IsZero() {
			continue
		}
		fit, _ := ci.Fit(&c.Request)
		if fit < need {
			return ci, Short{Cluster: ci.Name, Component: c.Name, Need: need, Fit: fit, Request: c.Request, Nodes: len(ci.Nodes) > 0}, false
		}
		ci = ci.Take(&c.Request, need)
	}
	return ci, Short{}, true
}

// Describe writes one replica's request as quantities read: "cpu 4,
// memory 8Gi, nvidia.com/gpu 1".
func Describe(r *framework.Resources) string {
	var parts []string
	if r.MilliCPU > 0 {
		parts = append(parts, "cpu "+resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI).String())
	}
	if r.Memory > 0 {
		parts = append(parts, "memory "+resource.NewQuantity(r.Memory, resource.BinarySI).String())
	}
	for _, s := range r.Scalars {
		if s.Value > 0 {
			parts = append(parts, string(s.Name)+" "+resource.NewQuantity(s.Value, resource.DecimalSI).String())
		}
	}
	return strings.Join(parts, ", ")
}
