// Package annotations defines the annotations through which the pod
// rescheduler's three parts (controller, admission webhook, scheduler
// plugin) talk to each other and to users, and the retry state they encode.
//
// State lives in annotations rather than in memory so that every part is
// stateless: a restarted controller, a second webhook replica or the
// scheduler all read the same truth from the API server, and updates to it
// are serialised by the API server's optimistic locking.
//
// On a workload (Deployment, StatefulSet, Job, ReplicaSet) or on a pod
// without an owner:
//
//	shepherd.io/scheduling-retries: "2"           # opt-in: reschedule up to 2 times
//	shepherd.io/rescheduling-count: "1"           # failures handled so far
//	shepherd.io/scheduled-nodes: node-a           # nodes the failed pods ran on
//	shepherd.io/failed-pods: 5d0c...              # UIDs of the failed pods handled
//
// rescheduling-count counts failures handled, as the design's
// currentReschedulingTimes does: while it is at most scheduling-retries
// each failure led to a reschedule; once it exceeds it, the retries are
// exhausted and exclusions no longer apply.
//
// On a pod, written by the webhook (or by the controller when it recreates
// an owner-less pod), read by the scheduler plugin:
//
//	shepherd.io/excluded-nodes: node-a,node-b
//
// Lists are comma-separated: node names and UIDs never contain commas, and
// the format reads well in `kubectl get -o yaml`.
package annotations

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Annotation keys.
const (
	SchedulingRetries = "shepherd.io/scheduling-retries"
	ReschedulingCount = "shepherd.io/rescheduling-count"
	ScheduledNodes    = "shepherd.io/scheduled-nodes"
	FailedPods        = "shepherd.io/failed-pods"
	ExcludedNodes     = "shepherd.io/excluded-nodes"
	// RescheduledFrom is the UID of the owner-less pod a recreated pod
	// replaces; it makes recreation idempotent.
	RescheduledFrom = "shepherd.io/rescheduled-from"
	// OriginalName is the name of the first pod of an owner-less chain of
	// recreations, from which the replacements' names are derived.
	OriginalName = "shepherd.io/original-name"
)

// MaxRetries bounds scheduling-retries, which bounds the size of the lists
// the state keeps in annotations.
const MaxRetries = 50

// State is the retry state of a workload or owner-less pod.
type State struct {
	// Retries is the opted-in limit (1..MaxRetries).
	Retries int
	// Count is how many failures were handled (see the package doc).
	Count int
	// Nodes are the nodes the failed pods ran on, oldest first, without
	// duplicates.
	Nodes []string
	// FailedPods are the UIDs of the failed pods handled, oldest first.
	FailedPods []string
}

// OptedIn reports whether an object with annotations ann opted into
// rescheduling: it has scheduling-retries, whatever its value (Read
// reports a malformed one).
func OptedIn(ann map[string]string) bool {
	_, ok := ann[SchedulingRetries]
	return ok
}

// Read returns the state recorded in ann. ok is false when the object did
// not opt in (no scheduling-retries annotation); err reports malformed
// values, in which case the object must be left alone.
func Read(ann map[string]string) (s State, ok bool, err error) {
	if !OptedIn(ann) {
		return State{}, false, nil
	}
	raw := ann[SchedulingRetries]
	s.Retries, err = strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || s.Retries < 1 || s.Retries > MaxRetries {
		return State{}, true, fmt.Errorf("%s=%q: want an integer in 1..%d", SchedulingRetries, raw, MaxRetries)
	}
	if raw, found := ann[ReschedulingCount]; found {
		s.Count, err = strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || s.Count < 0 {
			return State{}, true, fmt.Errorf("%s=%q: want a non-negative integer", ReschedulingCount, raw)
		}
	}
	s.Nodes = ParseList(ann[ScheduledNodes])
	s.FailedPods = ParseList(ann[FailedPods])
	return s, true, nil
}

// Exhausted reports whether a failure was seen after the last allowed
// reschedule.
func (s State) Exhausted() bool { return s.Count > s.Retries }

// Record returns the state after one more failure of pod uid on node.
func (s State) Record(node, uid string) State {
	s.Count++
	s.Nodes = slices.Clone(s.Nodes)
	if node != "" && !slices.Contains(s.Nodes, node) {
		s.Nodes = append(s.Nodes, node)
	}
	s.FailedPods = append(slices.Clone(s.FailedPods), uid)
	return s
}

// Write stores the state in ann (which must not be nil).
func (s State) Write(ann map[string]string) {
	ann[SchedulingRetries] = strconv.Itoa(s.Retries)
	ann[ReschedulingCount] = strconv.Itoa(s.Count)
	ann[ScheduledNodes] = FormatList(s.Nodes)
	ann[FailedPods] = FormatList(s.FailedPods)
}

// ParseList splits a comma-separated list, dropping blanks and
// surrounding spaces.
func ParseList(raw string) []string {
	var out []string
	for item := range strings.SplitSeq(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// FormatList joins items with commas.
func FormatList(items []string) string { return strings.Join(items, ",") }
