package scheduler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// ReasonCount is how many clusters a filter reason rejected.
type ReasonCount struct {
	// Plugin is the filter that gave the reason.
	Plugin string `json:"plugin"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// FitError says why a workload does not fit under one affinity term.
type FitError struct {
	// Term is the affinity term ("" without fallback terms).
	Term string
	// NumClusters in the fleet and NumFeasible that passed every filter.
	NumClusters, NumFeasible int
	// Reasons counts the filter rejections, most frequent first (ties by text).
	Reasons []ReasonCount
	// Constraint and Message come from package core when the feasible
	// clusters could not be placed on (e.g. a spread constraint).
	Constraint, Message string
	// Room says, when the feasible clusters lack room for the replicas,
	// how many fit on each (most first, at most maxRoom of them) and what
	// limits it, with the node model when room on any one node does.
	Room []ClusterRoom
	// last is the plugin, latest in the profile's filter order, that
	// rejected clusters: the one that rejected the last clusters standing.
	last string
}

func newFitError(snap *framework.Snapshot, c *framework.Cycle, ue *core.UnschedulableError, filters []string) *FitError {
	e := &FitError{Term: c.Term.Name, NumClusters: snap.Len(), NumFeasible: len(c.Feasible)}
	if ue != nil {
		e.Constraint, e.Message = ue.Constraint, ue.Message
		if !strings.HasPrefix(e.Message, e.Constraint) {
			e.Message = e.Constraint + ": " + e.Message
		}
	}
	// Plugins share statuses, so count by pointer first (cheap) and merge
	// equal messages after.
	type reason struct{ plugin, text string }
	byStatus := map[framework.Rejection]int{}
	for _, rej := range c.Rejections {
		if rej.Status != nil {
			byStatus[rej]++
		}
	}
	byReason := map[reason]int{}
	lastRank := -2 // below the -1 of the framework's own rejections
	for rej, n := range byStatus {
		byReason[reason{rej.Plugin, rej.Status.Message()}] += n
		if rank := slices.Index(filters, rej.Plugin); rank > lastRank {
			lastRank, e.last = rank, rej.Plugin
		}
	}
	for r, n := range byReason {
		e.Reasons = append(e.Reasons, ReasonCount{Plugin: r.plugin, Reason: r.text, Count: n})
	}
	slices.SortFunc(e.Reasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	return e
}

// ClusterRoom is how many replicas of the workload fit on one feasible
// cluster, and what limits the number.
type ClusterRoom struct {
	Cluster string `json:"cluster"`
	// Fit is how many replicas fit: the smallest of the cluster's summed
	// room and its node model (replicas in flight already deducted).
	Fit int64 `json:"fit"`
	// Limiting is the resource that runs out first
	// (framework.ResourceNodeRoom when the node model is tighter than the
	// sums).
	Limiting string `json:"limiting,omitempty"`
	// Nodes describes the node model ("2 × 8000m CPU 32768Mi 110 pods
	// free"): in messages when it limits, in explanations always.
	Nodes string `json:"nodes,omitempty"`
}

// clusterRoom is ci's room for replicas of req; the node model is
// described when it limits, or always with allNodes (up to maxGroups
// groups).
func clusterRoom(ci *framework.ClusterInfo, req *framework.Resources, allNodes bool, maxGroups int) ClusterRoom {
	n, limiting := ci.Fit(req)
	r := ClusterRoom{Cluster: ci.Name, Fit: n, Limiting: string(limiting)}
	if allNodes || limiting == framework.ResourceNodeRoom {
		r.Nodes = describeNodes(ci.Nodes, maxGroups)
	}
	return r
}

// maxRoom bounds the clusters a message lists.
const maxRoom = 5

// roomOf lists the room of the clusters of snap at indices: the feasible
// ones when they cannot hold the replicas, or those the room filter
// rejected when none is feasible.
func roomOf(snap *framework.Snapshot, indices []int32, req *framework.Resources) []ClusterRoom {
	if req.IsZero() || len(indices) == 0 {
		return nil
	}
	out := make([]ClusterRoom, 0, len(indices))
	for _, i := range indices {
		out = append(out, clusterRoom(snap.At(int(i)), req, false, messageGroups))
	}
	slices.SortStableFunc(out, func(a, b ClusterRoom) int { return cmp.Compare(b.Fit, a.Fit) })
	return out[:min(len(out), maxRoom)]
}

// rejectedBy lists the indices of the clusters plugin rejected.
func rejectedBy(c *framework.Cycle, plugin string) []int32 {
	var out []int32
	for i, rej := range c.Rejections {
		if rej.Status != nil && rej.Plugin == plugin {
			out = append(out, int32(i))
		}
	}
	return out
}

// messageGroups bounds the node groups an Unschedulable message describes.
const messageGroups = 3

// describeNodes writes a node model compactly, at most max groups:
// "2 × 8000m CPU 32768Mi 110 pods free, 1 × 500m CPU 1024Mi 10 pods free".
func describeNodes(nodes []framework.NodeRoom, max int) string {
	parts := make([]string, 0, min(len(nodes), max+1))
	for i, g := range nodes {
		if i == max {
			parts = append(parts, fmt.Sprintf("+%d more groups", len(nodes)-max))
			break
		}
		parts = append(parts, fmt.Sprintf("%d × %dm CPU %dMi %d pods free", g.Count, g.Free.MilliCPU, g.Free.Memory>>20, g.Free.Pods))
	}
	return strings.Join(parts, ", ")
}

// Error reads like kube-scheduler's: "0/40 clusters available: 12
// untolerated taint {key=value:NoSchedule}, 28 missing apps/v1/StatefulSet",
// or, when clusters passed the filters but no placement meets the
// constraints, "12/40 clusters available (28 missing ...): spreadConstraints[region].minGroups: ...".
func (e *FitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d clusters available", e.NumFeasible, e.NumClusters)
	reasons := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		reasons[i] = fmt.Sprintf("%d %s", r.Count, r.Reason)
	}
	switch {
	case e.Message == "" && len(reasons) == 0:
		b.WriteString(": the fleet has no clusters")
	case e.Message == "":
		b.WriteString(": " + strings.Join(reasons, ", "))
	case len(reasons) > 0:
		b.WriteString(" (" + strings.Join(reasons, ", ") + "): " + e.Message)
	default:
		b.WriteString(": " + e.Message)
	}
	if len(e.Room) > 0 {
		rooms := make([]string, len(e.Room))
		for i, r := range e.Room {
			rooms[i] = fmt.Sprintf("%s fits %d", r.Cluster, r.Fit)
			switch {
			case r.Nodes != "":
				rooms[i] += fmt.Sprintf(" (%s: %s)", r.Limiting, r.Nodes)
			case r.Limiting != "":
				rooms[i] += fmt.Sprintf(" (%s)", r.Limiting)
			}
		}
		b.WriteString("; room: " + strings.Join(rooms, "; "))
	}
	return b.String()
}

// Category is the error without counts, so that workloads failing for the
// same reason share it whatever the fleet: core's message with its numbers
// replaced by N, or else the reasons of the filter that rejected the last
// clusters standing (the latest in profile order to reject any), sorted.
// The earlier filters' reasons are in the message but not the category:
// "labels do not match" is true of most clusters for most workloads and says
// nothing about why this one failed.
func (e *FitError) Category() string {
	if e.Message != "" {
		return numbersToN(e.Message)
	}
	var reasons []string
	for _, r := range e.Reasons {
		if r.Plugin == e.last {
			reasons = append(reasons, r.Reason)
		}
	}
	if len(reasons) == 0 {
		return "the fleet has no clusters"
	}
	slices.Sort(reasons)
	return strings.Join(reasons, ", ")
}

// numbersToN replaces every run of digits by "N".
func numbersToN(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		isDigit := r >= '0' && r <= '9'
		if !isDigit {
			b.WriteRune(r)
		} else if !digits {
			b.WriteByte('N')
		}
		digits = isDigit
	}
	return b.String()
}

// UnschedulableError says the workload fits under none of its affinity
// terms; Failures are in the order the terms were tried.
type UnschedulableError struct {
	Failures []*FitError
}

func (e *UnschedulableError) Error() string { return e.join((*FitError).Error) }

// Category joins the failures' categories.
func (e *UnschedulableError) Category() string { return e.join((*FitError).Category) }

func (e *UnschedulableError) join(f func(*FitError) string) string {
	parts := make([]string, len(e.Failures))
	for i, fe := range e.Failures {
		parts[i] = f(fe)
		if fe.Term != "" {
			parts[i] = fmt.Sprintf("affinity term %q: %s", fe.Term, parts[i])
		}
	}
	return strings.Join(parts, "; ")
}
