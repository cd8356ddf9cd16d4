package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/gangfit"
)

// A workload whose components are divided (Workload.DivideComponents: its
// placement's components.division is DivideIndependent, its rule marks a
// component divisible and gives every component's replicasPath) is placed
// in two parts, after the filters and scores ran as for any workload
// (GangFit skips it):
//
//  1. The head: the components that are not divisible go together,
//     whole, to one feasible cluster where they fit node by node
//     (gangfit.Take, with what the cluster runs of them already). The
//     candidates are ranked, in a Steady cycle, the previous head cluster
//     first, then the clusters that run the workload; then by total
//     score, higher first; then by name. No head when every component is
//     divisible.
//  2. The divisible components, in the interpreter's order, each divided
//     over the feasible clusters from the room left by the head and the
//     components before it, node by node (ClusterInfo.Fit and Take): as
//     a Deployment divided by dynamic weights is (core.Schedule,
//     DynamicWeight). Clusters are taken best first (in a Steady cycle
//     those that run the component first, then score, room, name) until
//     they hold its replicas, and the replicas divided in proportion to
//     each one's room (Webster's method, equal claims broken by name in
//     the direction the template's UID draws). A Steady cycle keeps the
//     previous shares when the component's replicas did not change, adds
//     only new replicas by room, and shrinks in proportion.
//
// All or nothing: when a divisible component's replicas do not fit in the
// room of all the clusters, the next head candidate is tried (at most
// maxHeadTries of them: only the head cluster's room differs from one try
// to the next); when none works, the workload is Unschedulable with the
// first try's reason, naming the component and what fits where, and
// nothing is placed. A result depends on its input alone: no map is
// iterated.

// maxHeadTries bounds the head clusters tried for one cycle.
const maxHeadTries = 8

// ConstraintComponents names the division of components in an
// unschedulable reason.
const ConstraintComponents = "components"

// byRoom divides one component's replicas as a Deployment divided by
// dynamic weights is divided.
var byRoom = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
	ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
	ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
}}

// divider places one divided workload over the feasible clusters of one
// cycle; every slice is indexed like the cycle's candidates (feasible
// clusters in name order).
type divider struct {
	w     *framework.Workload
	cands []core.Candidate
	// rooms are the clusters' room before the workload takes any (the
	// replicas in flight already out); held what each runs of each
	// component.
	rooms []framework.ClusterInfo
	held  []map[string]int32
	// head are the components that are not divisible, parts the indices
	// (in w.Components) of those that are.
	head  []framework.Component
	parts []int
}

// division is one try's result: the head cluster (-1 for none) and each
// divisible component's share of each cluster.
type division struct {
	head   int
	shares map[int][]int32
}

func newDivider(snap *framework.Snapshot, cycle *framework.Cycle, w *framework.Workload) *divider {
	d := &divider{w: w, cands: cycle.Candidates}
	for i, c := range w.Components {
		if c.Divisible {
			d.parts = append(d.parts, i)
		} else {
			d.head = append(d.head, c)
		}
	}
	d.rooms = make([]framework.ClusterInfo, len(cycle.Feasible))
	d.held = make([]map[string]int32, len(cycle.Feasible))
	for j, i := range cycle.Feasible {
		d.rooms[j] = *snap.At(int(i))
		d.held[j] = w.HeldComponents(d.rooms[j].Name)
	}
	return d
}

// scheduleDivided places w, whose components divide, on the cycle's
// feasible clusters (there is at least one), setting res's targets and
// division. A FitError says it does not fit; an error that the scheduler
// failed.
func (s *Scheduler) scheduleDivided(snap *framework.Snapshot, cycle *framework.Cycle, w *framework.Workload, res *Result) (*FitError, error) {
	d := newDivider(snap, cycle, w)
	heads, misfits := d.headOrder()
	if len(d.head) > 0 && len(heads) == 0 {
		return d.unschedulable(s, snap, cycle, res, headNowhere(misfits)), nil
	}
	if len(d.head) == 0 {
		heads = []int{-1}
	}
	reason := ""
	for _, h := range heads[:min(len(heads), maxHeadTries)] {
		div, why, err := d.divide(h)
		if err != nil {
			return nil, fmt.Errorf("scheduling %s/%s: %w", w.Namespace, w.Name, err)
		}
		if why == "" {
			res.Targets, res.Division = d.targets(div)
			return nil, nil
		}
		if reason == "" {
			reason = why
		}
	}
	if n := len(heads); n > maxHeadTries {
		reason += fmt.Sprintf(" (%d head clusters tried of %d where the head fits)", maxHeadTries, n)
	}
	return d.unschedulable(s, snap, cycle, res, reason), nil
}

// unschedulable records why the workload does not divide and returns its
// FitError.
func (d *divider) unschedulable(s *Scheduler, snap *framework.Snapshot, cycle *framework.Cycle, res *Result, msg string) *FitError {
	res.failure = &core.UnschedulableError{Constraint: ConstraintComponents, Message: msg}
	return newFitError(snap, cycle, res.failure, s.filters)
}

// headOrder lists the clusters the head fits on, best first (see the top
// of this file), and the reason of each where it does not, in name order.
func (d *divider) headOrder() ([]int, []gangfit.Short) {
	if len(d.head) == 0 {
		return nil, nil
	}
	var fits []int
	var misfits []gangfit.Short
	for j := range d.cands {
		if _, short, ok := gangfit.Take(d.rooms[j], d.head, d.held[j]); ok {
			fits = append(fits, j)
		} else {
			misfits = append(misfits, short)
		}
	}
	steady := d.w.Mode == core.Steady
	rank := func(j int) int {
		switch {
		case steady && d.cands[j].Name == d.w.PreviousHead:
			return 0
		case steady && d.cands[j].Held:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(fits, func(a, b int) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(d.cands[b].Score, d.cands[a].Score), strings.Compare(d.cands[a].Name, d.cands[b].Name))
	})
	return fits, misfits
}

// headNowhere is the reason when the head fits on no feasible cluster.
func headNowhere(misfits []gangfit.Short) string {
	parts := make([]string, 0, min(len(misfits), maxRoom)+1)
	for i, m := range misfits {
		if i == maxRoom {
			parts = append(parts, fmt.Sprintf("and %d more clusters", len(misfits)-i))
			break
		}
		parts = append(parts, m.String())
	}
	return "the components that are not divisible fit together on no cluster: " + strings.Join(parts, "; ")
}

// divide places the head on cluster h (none when h < 0) and divides each
// divisible component over the clusters' room. why says which component
// does not fit, and where what fits; err is a failure of the scheduler.
func (d *divider) divide(h int) (div division, why string, err error) {
	rooms := slices.Clone(d.rooms) // Take copies what it changes
	if h >= 0 {
		rooms[h], _, _ = gangfit.Take(rooms[h], d.head, d.held[h])
	}
	div = division{head: h, shares: make(map[int][]int32, len(d.parts))}
	cands := make([]core.Candidate, len(d.cands))
	for _, k := range d.parts {
		c := &d.w.Components[k]
		if c.Replicas <= 0 {
			continue
		}
		for j := range cands {
			prev := d.held[j][c.Name]
			fit, _ := rooms[j].Fit(&c.Request)
			cands[j] = d.cands[j]
			cands[j].Available, cands[j].Previous, cands[j].Held, cands[j].StaticWeight, cands[j].Tier = fit, prev, prev > 0, 0, 0
		}
		out, err := core.Schedule(cands, core.Request{Replicas: c.Replicas, Placement: byRoom, Mode: d.w.Mode, TieSeed: d.w.UID})
		var ue *core.UnschedulableError
		switch {
		case errors.As(err, &ue):
			return division{}, d.short(c, cands, h), nil
		case err != nil:
			return division{}, "", fmt.Errorf("component %q: %w", c.Name, err)
		}
		share := make([]int32, len(cands))
		for _, t := range out.Targets {
			j, ok := slices.BinarySearchFunc(cands, t.Name, func(c core.Candidate, name string) int { return strings.Compare(c.Name, name) })
			if !ok {
				return division{}, "", fmt.Errorf("component %q: target %s is no feasible cluster", c.Name, t.Name)
			}
			share[j] = t.Replicas
			rooms[j] = rooms[j].Take(&c.Request, int64(t.Replicas-cands[j].Previous))
		}
		div.shares[k] = share
	}
	return div, "", nil
}

// short says that component c does not fit in the clusters' room cands
// (with the head on h): how many of its replicas fit, and where, most
// first.
func (d *divider) short(c *framework.Component, cands []core.Candidate, h int) string {
	type fit struct {
		name string
		n    int64
	}
	fits := make([]fit, len(cands))
	var sum int64
	for j, cd := range cands {
		fits[j] = fit{cd.Name, min(max(cd.Available, 0)+int64(cd.Previous), core.Unlimited)}
		sum = min(sum+fits[j].n, core.Unlimited)
	}
	slices.SortStableFunc(fits, func(a, b fit) int { return cmp.Compare(b.n, a.n) })
	where := make([]string, 0, min(len(fits), maxRoom)+1)
	for i, f := range fits {
		if i == maxRoom {
			where = append(where, fmt.Sprintf("and %d more clusters", len(fits)-i))
			break
		}
		where = append(where, fmt.Sprintf("%s %d", f.name, f.n))
	}
	msg := fmt.Sprintf("component %q (%d × %s) does not fit: %d of %d fit in the room of the clusters (%s)",
		c.Name, c.Replicas, gangfit.Describe(&c.Request), min(sum, int64(c.Replicas)), c.Replicas, strings.Join(where, ", "))
	if h >= 0 {
		msg += ", with the head on " + d.cands[h].Name
	}
	return msg
}

// targets are the clusters of div, in name order: the head cluster with
// the components that are not divisible, all their replicas, and each
// cluster with its share of each divisible component, in the order of
// the workload's components. A workload with nothing to run anywhere (no
// head, its divisible components at 0 replicas) still has its object on
// one cluster: the best scored, ties by name.
func (d *divider) targets(div division) ([]workv1alpha1.TargetCluster, *workv1alpha1.DividedComponents) {
	var out []workv1alpha1.TargetCluster
	for j := range d.cands {
		var tcs []workv1alpha1.TargetComponent
		for k, c := range d.w.Components {
			switch n := div.shares[k]; {
			case !c.Divisible && j == div.head:
				tcs = append(tcs, workv1alpha1.TargetComponent{Name: c.Name, Replicas: max(c.Replicas, 0)})
			case c.Divisible && n != nil && n[j] > 0:
				tcs = append(tcs, workv1alpha1.TargetComponent{Name: c.Name, Replicas: n[j]})
			}
		}
		if len(tcs) > 0 || j == div.head {
			out = append(out, workv1alpha1.TargetCluster{Name: d.cands[j].Name, Components: tcs})
		}
	}
	if len(out) == 0 {
		best := 0
		for j := range d.cands {
			if d.cands[j].Score > d.cands[best].Score {
				best = j
			}
		}
		out = append(out, workv1alpha1.TargetCluster{Name: d.cands[best].Name})
	}
	division := &workv1alpha1.DividedComponents{}
	if div.head >= 0 {
		division.HeadCluster = d.cands[div.head].Name
	}
	return out, division
}
