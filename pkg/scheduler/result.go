package scheduler

import (
	"cmp"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Result is a placement and what led to it.
//
// Explanations are computed on demand from the cycle's compact per-cluster
// record (a status pointer per cluster, a score row per feasible cluster):
// materializing one struct per cluster for every workload would dominate
// the cost of scheduling on a large fleet, and most callers (the binding
// controller, benchmarks) only need the targets and a few decisions.
//
// That record lives in pooled memory. Call Release when the explanations are
// no longer needed, so the next workload reuses it instead of allocating
// (Targets and AffinityName stay valid); a Result never released is simply
// garbage collected.
type Result struct {
	// Targets sorted by cluster name. For Duplicated each carries the
	// workload's replicas.
	Targets []workv1alpha1.TargetCluster
	// AffinityName is the fallback affinity term used ("" without terms).
	AffinityName string
	// Division is set when the workload's components were divided over
	// the targets (Workload.DivideComponents): it names the head cluster.
	// The binding records it in spec.dividedComponents. Nil when the
	// workload is placed whole.
	Division *workv1alpha1.DividedComponents
	// NotDivided says why a workload whose placement asked to divide its
	// components is placed whole (Workload.NotDivided); "" otherwise.
	NotDivided string

	snap        *framework.Snapshot
	request     *framework.Resources
	cycle       *framework.Cycle
	notSelected []core.Explanation
	failure     *core.UnschedulableError
}

// Explanation is one cluster's fate.
type Explanation struct {
	Cluster string `json:"cluster"`
	// FilteredBy is the filter that rejected the cluster; empty when the
	// cluster passed every filter.
	FilteredBy string `json:"filteredBy,omitempty"`
	// Scores per score plugin, 0..100 before weights (feasible clusters).
	Scores []workv1alpha1.PluginScore `json:"scores,omitempty"`
	// Total is the weighted sum of Scores.
	Total int64 `json:"total,omitempty"`
	// Selected is true when the cluster received the workload.
	Selected bool `json:"selected"`
	// Replicas placed on a selected cluster.
	Replicas int32 `json:"replicas,omitempty"`
	// Reason says why the cluster was filtered out, selected or not.
	Reason string `json:"reason"`
	// Room is how many replicas of the workload the cluster has room for
	// and its node model, for workloads that ask for resources.
	Room *ClusterRoom `json:"room,omitempty"`
}

// Reasons of feasible clusters.
const (
	ReasonSelected    = "selected"
	ReasonNotSelected = "not selected"
)

// Release returns the Result's explanation record to the pool; Explain,
// Explanations, Decisions and ScorePlugins must not be called afterwards
// (they panic). Safe on nil.
func (r *Result) Release() {
	if r != nil && r.cycle != nil {
		r.cycle.Release()
		r.cycle = nil
	}
}

// ScorePlugins are the score plugins that ran, in profile order (those that
// skipped themselves for this workload are left out).
func (r *Result) ScorePlugins() []string { return r.live().ScorePlugins }

// live returns the cycle record, which Release gives back.
func (r *Result) live() *framework.Cycle {
	if r.cycle == nil {
		panic("scheduler: Result explained after Release")
	}
	return r.cycle
}

// Explanations explains every cluster of the snapshot, in name order,
// each with its room for the workload and node model when the workload
// asks for resources (Explain and Decisions leave the room out: the
// binding controller writes decisions every cycle and the messages
// already name the room when it is short).
func (r *Result) Explanations() []Explanation {
	out := make([]Explanation, r.snap.Len())
	for i := range out {
		out[i] = r.Explain(i)
		if r.request != nil && !r.request.IsZero() {
			room := clusterRoom(r.snap.At(i), r.request, true, clusterv1alpha1.MaxNodeGroups)
			out[i].Room = &room
		}
	}
	return out
}

// Explain explains the cluster at snapshot index i.
func (r *Result) Explain(i int) Explanation {
	c := r.live()
	name := r.snap.At(i).Name
	e := Explanation{Cluster: name}
	if rej := c.Rejections[i]; rej.Status != nil {
		e.FilteredBy, e.Reason = rej.Plugin, rej.Status.Message()
		return e
	}
	if j, ok := slices.BinarySearch(c.Feasible, int32(i)); ok && len(c.Totals) > 0 {
		np := len(c.ScorePlugins)
		e.Scores = make([]workv1alpha1.PluginScore, np)
		for p := range np {
			e.Scores[p] = workv1alpha1.PluginScore{Plugin: c.ScorePlugins[p], Score: c.Scores[j*np+p]}
		}
		e.Total = c.Totals[j]
	}
	if t, ok := r.target(name); ok {
		e.Selected, e.Replicas, e.Reason = true, r.Targets[t].Replicas, ReasonSelected
		return e
	}
	switch k, ok := slices.BinarySearchFunc(r.notSelected, name, func(x core.Explanation, n string) int { return strings.Compare(x.Cluster, n) }); {
	case ok:
		e.Reason = r.notSelected[k].Reason
	case r.failure != nil:
		e.Reason = "feasible, but no placement exists: " + r.failure.Message
	default:
		e.Reason = ReasonNotSelected
	}
	return e
}

// Decisions returns the explanations as binding status decisions, capped at
// workv1alpha1.MaxSchedulingDecisions: the selected clusters first (by
// name), then the other feasible clusters by total score (best first, ties
// by name), then the filtered ones by name. Only the decisions kept are
// computed.
func (r *Result) Decisions() []workv1alpha1.ClusterDecision {
	c := r.live()
	order := make([]int, 0, workv1alpha1.MaxSchedulingDecisions)
	for _, t := range r.Targets {
		if i, ok := r.snap.Index(t.Name); ok && len(order) < cap(order) {
			order = append(order, i)
		}
	}
	if len(order) < cap(order) {
		order = r.appendUnselected(c, order)
	}
	out := make([]workv1alpha1.ClusterDecision, len(order))
	for k, i := range order {
		e := r.Explain(i)
		out[k] = workv1alpha1.ClusterDecision{ClusterName: e.Cluster, Selected: e.Selected, Scores: e.Scores, TotalScore: e.Total, Reason: e.Reason}
	}
	return out
}

// target finds a target by cluster name.
func (r *Result) target(name string) (int, bool) {
	return slices.BinarySearchFunc(r.Targets, name, func(t workv1alpha1.TargetCluster, n string) int { return strings.Compare(t.Name, n) })
}

// appendUnselected fills order up to its capacity with feasible clusters
// not selected (best total first) and then filtered ones.
func (r *Result) appendUnselected(c *framework.Cycle, order []int) []int {
	var rest []int // positions in Feasible
	for j, i := range c.Feasible {
		if _, selected := r.target(r.snap.At(int(i)).Name); !selected {
			rest = append(rest, j)
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int {
		if len(c.Totals) == 0 {
			return 0
		}
		return cmp.Compare(c.Totals[b], c.Totals[a])
	})
	for _, j := range rest {
		if len(order) == cap(order) {
			return order
		}
		order = append(order, int(c.Feasible[j]))
	}
	for i := range c.Rejections {
		if len(order) == cap(order) {
			break
		}
		if c.Rejections[i].Status != nil {
			order = append(order, i)
		}
	}
	return order
}
