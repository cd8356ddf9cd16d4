package dashboard

import (
	"fmt"
	"sort"
	"strings"
	"time"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// WorkloadView is a workload's page.
type WorkloadView struct {
	Row        WorkloadRow
	Fleet      FleetView
	Conditions []metav1.Condition
	// Decisions explain the clusters' fate: as the scheduler stored them
	// (selected first, then the best of the others), or every cluster when
	// the page asked the scheduler to explain them all (Live).
	Decisions []Decision
	Live      bool
	Works     []WorkView
	Evictions []EvictionView
	Timeline  []TimelineEntry
	// Rollout is set for a Progressive or Staged rollout.
	Rollout *RolloutView
}

// Decision is one cluster's fate in a scheduling.
type Decision struct {
	Cluster    string
	Selected   bool
	Replicas   int32
	Scores     []workv1alpha1.PluginScore
	Total      int64
	FilteredBy string
	Reason     string
	// NodeRoom is set when room on any one node limited how many
	// replicas fit on the cluster (a replica never spans nodes).
	NodeRoom *NodeRoomLimit
}

// WorkView is one of the workload's Works.
type WorkView struct {
	Name       string
	Cluster    string
	Conditions []metav1.Condition
}

// TimelineEntry is one thing that happened to a workload.
type TimelineEntry struct {
	Time time.Time
	// Kind: Scheduled, Event, Eviction, Evicting or Reschedule.
	Kind    string
	Reason  string
	Message string
	// Warning marks entries that report a failure.
	Warning bool
}

// BuildWorkload builds the page of binding b; kinds reads the copies'
// ready replicas.
func BuildWorkload(kinds interpreter.Interpreter, s *Snapshot, b Binding) WorkloadView {
	spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
	v := WorkloadView{Row: Row(kinds, b), Fleet: BuildFleet(s, &b), Conditions: status.Conditions}
	replicas := map[string]int32{}
	for _, t := range spec.Clusters {
		replicas[t.Name] = t.Replicas
	}
	for _, d := range status.SchedulingDecisions {
		dec := Decision{Cluster: d.ClusterName, Selected: d.Selected, Scores: d.Scores, Total: d.TotalScore, Reason: d.Reason}
		if d.Selected {
			dec.Replicas = replicas[d.ClusterName]
		}
		if NamesNodeRoom(d.Reason) {
			dec.NodeRoom = &NodeRoomLimit{Fits: -1, Nodes: nodeModelOfCluster(s.cluster(d.ClusterName))}
		}
		v.Decisions = append(v.Decisions, dec)
	}
	v.Works = worksOf(s, b.Ref())
	v.Evictions = evictionsOf(b)
	v.Timeline = timeline(s, b)
	v.Rollout = buildRollout(b)
	return v
}

// worksOf lists the binding's Works, by cluster.
func worksOf(s *Snapshot, r Ref) []WorkView {
	var out []WorkView
	for _, w := range s.Works {
		if isWorkOf(w, r) {
			out = append(out, WorkView{Name: w.Name, Cluster: w.Labels[workv1alpha1.LabelCluster], Conditions: w.Status.Conditions})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// isWorkOf reports whether w is one of the Works of binding r, by the
// binding annotation the binding controller writes (the labels hold
// hashed values past 63 characters, so a long name would not match them).
func isWorkOf(w *workv1alpha1.Work, r Ref) bool {
	return w.Annotations[workv1alpha1.AnnotationBinding] == names.BindingRef{Kind: r.Kind(), Namespace: r.Namespace, Name: r.Name}.String()
}

// pullClusters are the clusters whose Works a Pull agent applies: the
// events on those Works are the agent's, written with credentials that
// reach its execution namespace, so their reasons and notes are the
// agent's choice and stay off the workload's timeline (the Works table
// shows the Works' conditions).
func pullClusters(s *Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, c := range s.Clusters {
		if c.Spec.SyncMode == clusterv1alpha1.Pull {
			out[c.Name] = true
		}
	}
	return out
}

// Object names an object whose events a page shows.
type Object struct {
	Kind, Namespace, Name string
}

// EventShownOn reports whether event e is shown on object o: e must regard
// o and have been recorded in o's namespace (a Work's is its execution
// namespace), or, for a cluster-scoped o, in default or kube-system, the
// only namespaces the API server accepts such events in (recorders use
// default).
//
// The namespace is the guard: with events.k8s.io/v1 and eventTime set, the
// API server lets anyone who may create events in some namespace name any
// object as regarding, so a Pull agent, whose credentials reach its
// execution namespace, could otherwise put a Warning on any workload's
// timeline. Where an event is recorded is what RBAC decides: writing in a
// workload's namespace takes rights there. What an event says about its
// author (reportingController, reportingInstance, source) is the writer's
// choice and proves nothing, so no reporter is trusted; Shepherd's
// controllers record every event in its object's namespace and need no
// exception.
func EventShownOn(e *eventsv1.Event, o Object) bool {
	r := e.Regarding
	if r.Kind != o.Kind || r.Namespace != o.Namespace || r.Name != o.Name {
		return false
	}
	if o.Namespace == "" {
		return e.Namespace == metav1.NamespaceDefault || e.Namespace == metav1.NamespaceSystem
	}
	return e.Namespace == o.Namespace
}

// timeline gathers, newest first, the binding's scheduling, its events,
// its template's and its Works' (those EventShownOn allows; none of a Pull
// cluster's, see pullClusters), its evictions
// and the reschedule tasks that named it.
// Entries at the same time keep a fixed order: by kind, then message.
func timeline(s *Snapshot, b Binding) []TimelineEntry {
	spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
	ref := b.Ref()
	var out []TimelineEntry
	if t := status.LastScheduledTime; t != nil {
		var targets []string
		for _, c := range spec.Clusters {
			if c.State != workv1alpha1.TargetUnscheduled {
				targets = append(targets, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
			}
		}
		out = append(out, TimelineEntry{Time: t.Time, Kind: "Scheduled", Reason: "Scheduled",
			Message: "placed on " + orNone(strings.Join(targets, ", "))})
	}
	// The objects whose events are the workload's, each with what its
	// events' messages start with.
	res := spec.Resource
	objects := map[Object]string{
		{Kind: ref.Kind(), Namespace: ref.Namespace, Name: ref.Name}: "",
		{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}:   "",
	}
	pull := pullClusters(s)
	for _, w := range s.Works {
		if isWorkOf(w, ref) && !pull[w.Labels[workv1alpha1.LabelCluster]] {
			objects[Object{Kind: "Work", Namespace: w.Namespace, Name: w.Name}] = "Work on " + w.Labels[workv1alpha1.LabelCluster] + ": "
		}
	}
	for _, e := range s.Events {
		o := Object{Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace, Name: e.Regarding.Name}
		prefix, ok := objects[o]
		if !ok || !EventShownOn(e, o) {
			continue
		}
		out = append(out, TimelineEntry{Time: eventTime(e), Kind: "Event", Reason: e.Reason, Message: prefix + e.Note, Warning: e.Type == "Warning"})
	}
	for _, h := range spec.EvictionHistory {
		out = append(out, TimelineEntry{Time: h.EvictedAt.Time, Kind: "Eviction", Reason: h.Reason, Warning: true,
			Message: "evicted from " + h.ClusterName + messageSuffix(h.Message)})
	}
	for _, task := range spec.GracefulEvictionTasks {
		out = append(out, TimelineEntry{Time: task.CreationTimestamp.Time, Kind: "Evicting", Reason: task.Reason, Warning: true,
			Message: fmt.Sprintf("old copy on %s kept until it may go (purge mode %s)%s", task.FromCluster, task.PurgeMode, messageSuffix(task.Message))})
	}
	for _, task := range s.Tasks {
		for _, t := range task.Status.Targets {
			if t.Binding != ref.String() {
				continue
			}
			when := task.CreationTimestamp.Time
			if t.FinishedAt != nil {
				when = t.FinishedAt.Time
			}
			out = append(out, TimelineEntry{Time: when, Kind: "Reschedule", Reason: string(t.Phase), Warning: t.Phase == "Failed",
				Message: "RescheduleTask " + task.Name + messageSuffix(t.Reason)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.After(b.Time)
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Message < b.Message
	})
	return out
}

// eventTime is when an event last happened.
func eventTime(e *eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

func messageSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

func orNone(s string) string {
	if s == "" {
		return "no cluster"
	}
	return s
}
