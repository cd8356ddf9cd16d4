package dashboard_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

func target(name string, replicas int32) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Replicas: replicas, State: workv1alpha1.TargetBound}
}

func TestBuildFleetGroupsAndCounts(t *testing.T) {
	c1 := dashboardtest.Cluster("b", "aws", "us-east-1", "us-east-1a")
	c2 := dashboardtest.Cluster("a", "aws", "us-east-1", "us-east-1a")
	c3 := dashboardtest.Cluster("c", "", "", "")
	c4 := dashboardtest.Cluster("d", "azure", "west", "west-1")
	c4.Status.Conditions[0].Status = metav1.ConditionFalse
	c2.Spec.Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}}
	gone := target("b", 9)
	gone.State = workv1alpha1.TargetUnscheduled
	s := &dashboard.Snapshot{
		Clusters: []*clusterv1alpha1.Cluster{c1, c2, c3, c4},
		Bindings: []dashboard.Binding{
			dashboardtest.Binding("ns", "one", "p", target("a", 2), target("b", 3)),
			dashboardtest.Binding("ns", "two", "p", target("a", 1), gone),
		},
	}
	v := dashboard.BuildFleet(s, nil)
	var order []string
	for _, p := range v.Providers {
		for _, r := range p.Regions {
			for _, z := range r.Zones {
				for _, c := range z.Clusters {
					order = append(order, fmt.Sprintf("%s/%s/%s/%s", p.Name, r.Name, z.Name, c.Name))
				}
			}
		}
	}
	want := []string{"aws/us-east-1/us-east-1a/a", "aws/us-east-1/us-east-1a/b", "azure/west/west-1/d", "(unset)/(unset)/(unset)/c"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	byName := map[string]*dashboard.ClusterCard{}
	for _, c := range v.Clusters {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		name      string
		workloads int
		replicas  int64
		state     string
		attention bool
	}{
		{"a", 2, 3, "Ready, tainted", true},
		{"b", 1, 3, "Ready", false},
		{"c", 0, 0, "Ready", false},
		{"d", 0, 0, "NotReady", true},
	} {
		c := byName[tc.name]
		if c.Workloads != tc.workloads || c.Replicas != tc.replicas || c.State() != tc.state || c.Attention() != tc.attention {
			t.Errorf("%s: workloads %d replicas %d state %q attention %t, want %d %d %q %t", tc.name, c.Workloads, c.Replicas, c.State(), c.Attention(),
				tc.workloads, tc.replicas, tc.state, tc.attention)
		}
	}
	if v.Ready != 3 || v.Attention != 2 {
		t.Errorf("ready %d attention %d, want 3 and 2", v.Ready, v.Attention)
	}
	if got := byName["a"].CPUFraction(); got != 0.25 {
		t.Errorf("cpu fraction %v, want 0.25", got)
	}
	if got := byName["a"].Taints; !reflect.DeepEqual(got, []string{"k=v:NoExecute"}) {
		t.Errorf("taints %v", got)
	}
}

func TestBuildFleetHighlight(t *testing.T) {
	s := dashboardtest.Fleet(6, 0)
	b := dashboardtest.Binding("ns", "w", "p", target("cluster-0001", 5))
	s.Bindings = append(s.Bindings, b)
	v := dashboard.BuildFleet(s, &b)
	for _, c := range v.Clusters {
		if c.Highlight != (c.Name == "cluster-0001") || (c.Highlight && c.Placed != 5) {
			t.Errorf("%s: highlight %t placed %d", c.Name, c.Highlight, c.Placed)
		}
	}
}

// Picture is the same for the same fleet, whatever the order of its clusters.
func TestPictureDeterministic(t *testing.T) {
	a := dashboardtest.Fleet(100, 40)
	b := dashboardtest.Fleet(100, 40)
	for i, j := 0, len(b.Clusters)-1; i < j; i, j = i+1, j-1 {
		b.Clusters[i], b.Clusters[j] = b.Clusters[j], b.Clusters[i]
	}
	pa, pb := dashboard.Picture(dashboard.BuildFleet(a, nil)), dashboard.Picture(dashboard.BuildFleet(b, nil))
	if pa != pb {
		t.Fatal("the picture depends on the order of the clusters")
	}
	for _, want := range []string{`class="tile notready"`, `class="tile ready tainted"`, `aria-label="cluster-0000: Ready`, `href="/workloads?cluster=cluster-0099"`} {
		if !strings.Contains(string(pa), want) {
			t.Errorf("picture lacks %s", want)
		}
	}
}

func TestPictureEscapesNames(t *testing.T) {
	s := &dashboard.Snapshot{Clusters: []*clusterv1alpha1.Cluster{dashboardtest.Cluster(`x"><script>`, `<p>`, "r", "z")}}
	p := string(dashboard.Picture(dashboard.BuildFleet(s, nil)))
	if strings.Contains(p, "<script>") || strings.Contains(p, "<p>") {
		t.Fatalf("unescaped name in %s", p)
	}
}

func TestRowHealthStrategyReady(t *testing.T) {
	unsched := dashboardtest.Binding("ns", "u", "p")
	unsched.Obj.GetBindingStatus().Conditions = []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionFalse, Message: "0/3 clusters are available"}}
	unhealthy := dashboardtest.Binding("ns", "h", "p", target("a", 1), target("b", 1))
	unhealthy.Obj.GetBindingStatus().AggregatedStatus[1].Health = policyv1alpha1.ResourceUnhealthy
	progressing := dashboardtest.Binding("ns", "g", "p", target("a", 1), target("b", 1))
	progressing.Obj.GetBindingStatus().AggregatedStatus = progressing.Obj.GetBindingStatus().AggregatedStatus[:1]
	for _, tc := range []struct {
		name        string
		b           dashboard.Binding
		health, msg string
		ready       int32
	}{
		{"healthy", dashboardtest.Binding("ns", "x", "p", target("a", 2), target("b", 3)), dashboard.HealthHealthy, "", 5},
		{"unschedulable", unsched, dashboard.HealthUnschedulable, "0/3 clusters are available", 0},
		{"one unhealthy", unhealthy, dashboard.HealthUnhealthy, "", 2},
		{"one without status", progressing, dashboard.HealthProgressing, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dashboard.Row(interpreter.Builtin(), tc.b)
			if r.Health != tc.health || r.Message != tc.msg || r.Ready != tc.ready {
				t.Errorf("health %q msg %q ready %d, want %q %q %d", r.Health, r.Message, r.Ready, tc.health, tc.msg, tc.ready)
			}
		})
	}
}

// TestRowCopyStates: each cluster's bar says what `shepherd get
// placements` says of the copy (AggregatedStatusItem.State): Applied for
// a kind no health rule judges, the Work's reason where the copy is not
// applied, the health where a rule judged it; kinds without replicas show
// no count; and the workload's health follows.
func TestRowCopyStates(t *testing.T) {
	configMap := func(items ...workv1alpha1.AggregatedStatusItem) dashboard.Binding {
		b := dashboardtest.Binding("ns", "cfg", "p", target("a", 0), target("b", 0))
		spec, status := b.Obj.GetBindingSpec(), b.Obj.GetBindingStatus()
		spec.Resource.APIVersion, spec.Resource.Kind = "v1", "ConfigMap"
		spec.Placement = &policyv1alpha1.Placement{}
		status.AggregatedStatus = items
		return b
	}
	applied := func(c string) workv1alpha1.AggregatedStatusItem {
		return workv1alpha1.AggregatedStatusItem{ClusterName: c, Applied: true, Health: policyv1alpha1.ResourceUnknown}
	}
	refused := func(c, reason string) workv1alpha1.AggregatedStatusItem {
		return workv1alpha1.AggregatedStatusItem{ClusterName: c, AppliedReason: reason, Health: policyv1alpha1.ResourceUnknown}
	}
	drifted := applied("b")
	drifted.Drifted = true
	notJudged := dashboardtest.Binding("ns", "web", "p", target("a", 2), target("b", 1))
	notJudged.Obj.GetBindingStatus().AggregatedStatus[1].Health = policyv1alpha1.ResourceUnknown
	for _, tc := range []struct {
		name    string
		b       dashboard.Binding
		states  []string
		counted bool
		health  string
	}{
		{"ConfigMap applied everywhere", configMap(applied("a"), applied("b")), []string{"Applied", "Applied"}, false, dashboard.HealthHealthy},
		{"ConfigMap in conflict on b", configMap(applied("a"), refused("b", "Conflict")), []string{"Applied", "Conflict"}, false, dashboard.HealthUnhealthy},
		{"ClusterRole refused for escalation", configMap(refused("a", "RBACEscalationForbidden"), applied("b")), []string{"RBACEscalationForbidden", "Applied"}, false, dashboard.HealthUnhealthy},
		{"ConfigMap failed and not yet reported", configMap(refused("a", "AppliedFailed")), []string{"AppliedFailed", "Unknown"}, false, dashboard.HealthUnhealthy},
		{"ConfigMap edited in a member", configMap(applied("a"), drifted), []string{"Applied", "Applied"}, false, dashboard.HealthHealthy},
		{"Deployment healthy", dashboardtest.Binding("ns", "x", "p", target("a", 2), target("b", 1)), []string{"Healthy", "Healthy"}, true, dashboard.HealthHealthy},
		{"Deployment applied, health not judged yet", notJudged, []string{"Healthy", "Applied"}, true, dashboard.HealthProgressing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dashboard.Row(interpreter.Builtin(), tc.b)
			var states []string
			for _, bar := range r.Targets {
				states = append(states, bar.State)
				if bar.Counted != tc.counted {
					t.Errorf("%s: counted %v, want %v", bar.Cluster, bar.Counted, tc.counted)
				}
			}
			if !reflect.DeepEqual(states, tc.states) {
				t.Errorf("states %v, want %v", states, tc.states)
			}
			// One reading of a copy's state: the bar's is the API's.
			for _, item := range tc.b.Obj.GetBindingStatus().AggregatedStatus {
				for _, bar := range r.Targets {
					if bar.Cluster == item.ClusterName && bar.State != item.State() {
						t.Errorf("%s: bar %q, State() %q", bar.Cluster, bar.State, item.State())
					}
				}
			}
			if r.Health != tc.health {
				t.Errorf("health %q, want %q", r.Health, tc.health)
			}
			if tc.name == "ConfigMap edited in a member" && !r.Targets[1].Drifted {
				t.Error("the drifted copy is not marked")
			}
		})
	}
}

func TestBuildWorkloadsFiltersAndPages(t *testing.T) {
	s := dashboardtest.Fleet(10, 250)
	for _, tc := range []struct {
		name    string
		f       dashboard.Filter
		page    int
		matched int
		rows    int
		first   string
	}{
		{"all, first page", dashboard.Filter{}, 1, 250, 100, "team-00/app-00000"},
		{"last page", dashboard.Filter{}, 3, 250, 50, ""},
		{"page past the end is the last", dashboard.Filter{}, 9, 250, 50, ""},
		{"namespace", dashboard.Filter{Namespace: "team-03"}, 1, 13, 13, "team-03/app-00003"},
		{"policy", dashboard.Filter{Policy: "team-01/policy-1"}, 1, 13, 13, "team-01/app-00001"},
		{"cluster", dashboard.Filter{Cluster: "cluster-0000"}, 1, 50, 50, ""},
		{"search ignores case", dashboard.Filter{Query: "APP-0024"}, 1, 10, 10, "team-00/app-00240"},
		{"search by namespace/name", dashboard.Filter{Query: "team-07/app-00007"}, 1, 1, 1, "team-07/app-00007"},
		{"health", dashboard.Filter{Health: dashboard.HealthUnhealthy}, 1, 0, 0, ""},
		{"unknown namespace", dashboard.Filter{Namespace: "nope"}, 1, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := dashboard.BuildWorkloads(interpreter.Builtin(), s, tc.f, tc.page)
			if v.Matched != tc.matched || len(v.Rows) != tc.rows || v.Total != 250 {
				t.Fatalf("matched %d rows %d total %d, want %d %d 250", v.Matched, len(v.Rows), v.Total, tc.matched, tc.rows)
			}
			if tc.first != "" && v.Rows[0].Namespace+"/"+v.Rows[0].Name != tc.first {
				t.Errorf("first row %s/%s, want %s", v.Rows[0].Namespace, v.Rows[0].Name, tc.first)
			}
			for i := 1; i < len(v.Rows); i++ {
				a, b := v.Rows[i-1], v.Rows[i]
				if a.Namespace > b.Namespace || (a.Namespace == b.Namespace && a.Name >= b.Name) {
					t.Fatalf("rows out of order: %s/%s before %s/%s", a.Namespace, a.Name, b.Namespace, b.Name)
				}
			}
		})
	}
}

func TestTimelineNewestFirst(t *testing.T) {
	b := dashboardtest.Binding("ns", "web", "p", target("a", 2))
	spec := b.Obj.GetBindingSpec()
	at := func(min int) metav1.Time {
		return metav1.Time{Time: dashboardtest.Epoch.Add(time.Duration(min) * time.Minute)}
	}
	spec.EvictionHistory = []workv1alpha1.EvictionHistoryEntry{{ClusterName: "old", EvictedAt: at(-5), Reason: "ApplicationFailure"}}
	spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "old", Reason: "ApplicationFailure", PurgeMode: policyv1alpha1.PurgeNever, CreationTimestamp: at(-4)}}
	s := &dashboard.Snapshot{
		Now:      dashboardtest.Epoch,
		Bindings: []dashboard.Binding{b},
		Events: []*eventsv1.Event{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Regarding: corev1.ObjectReference{Kind: "ResourceBinding", Namespace: "ns", Name: "web-deployment"}, Reason: "ScheduleBindingSucceed", Note: "done", EventTime: metav1.MicroTime{Time: at(1).Time}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: "ns", Name: "web"}, Reason: "ApplyFailed", Type: "Warning", Note: "on template", EventTime: metav1.MicroTime{Time: at(2).Time}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: "ns", Name: "other"}, Reason: "Unrelated", EventTime: metav1.MicroTime{Time: at(3).Time}},
		},
		Tasks: []*taskv1alpha1.RescheduleTask{{
			ObjectMeta: metav1.ObjectMeta{Name: "reschedule-1", CreationTimestamp: at(-1)},
			Status:     taskv1alpha1.RescheduleTaskStatus{Targets: []taskv1alpha1.TargetStatus{{Binding: "ns/web-deployment", Phase: taskv1alpha1.TargetSuccessful}, {Binding: "ns/other", Phase: taskv1alpha1.TargetFailed}}},
		}},
	}
	v := dashboard.BuildWorkload(interpreter.Builtin(), s, b)
	var got []string
	for _, e := range v.Timeline {
		got = append(got, e.Kind+" "+e.Reason)
	}
	want := []string{"Event ApplyFailed", "Event ScheduleBindingSucceed", "Scheduled Scheduled", "Reschedule Successful", "Evicting ApplicationFailure", "Eviction ApplicationFailure"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if len(v.Evictions) != 1 || !v.Evictions[0].AwaitingConfirmation {
		t.Errorf("evictions %+v, want one awaiting confirmation", v.Evictions)
	}
}

// event is an events.k8s.io/v1 Event recorded in namespace ns about
// regarding (Kind namespace/name), with eventTime set: the API server then
// accepts any regarding, whatever the event's own namespace.
func event(ns, kind, regardingNS, name, reason string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: reason},
		Regarding:  corev1.ObjectReference{Kind: kind, Namespace: regardingNS, Name: name},
		Reason:     reason, Type: "Warning", Note: reason,
		EventTime:           metav1.MicroTime{Time: dashboardtest.Epoch},
		ReportingController: "shepherd-scheduler", ReportingInstance: "shepherd-scheduler-0",
	}
}

// An event is shown on an object only when it was recorded where writing it
// takes rights over the object; what it says of its reporter counts for
// nothing.
func TestEventShownOn(t *testing.T) {
	deploy := dashboard.Object{Kind: "Deployment", Namespace: "team-a", Name: "web"}
	work := dashboard.Object{Kind: "Work", Namespace: "shepherd-es-member1", Name: "team-a.web-deployment"}
	clusterRole := dashboard.Object{Kind: "ClusterRole", Name: "viewer"}
	crb := dashboard.Object{Kind: "ClusterResourceBinding", Name: "viewer-clusterrole"}
	for _, tc := range []struct {
		name string
		e    *eventsv1.Event
		o    dashboard.Object
		want bool
	}{
		{"genuine event in the Deployment's namespace", event("team-a", "Deployment", "team-a", "web", "Genuine"), deploy, true},
		{"forged in an execution namespace about a Deployment", event("shepherd-es-member1", "Deployment", "team-a", "web", "Forged"), deploy, false},
		{"forged in another team's namespace", event("team-b", "Deployment", "team-a", "web", "Forged"), deploy, false},
		{"forged in default about a namespaced object", event("default", "Deployment", "team-a", "web", "Forged"), deploy, false},
		{"forged in shepherd-system about a namespaced object", event("shepherd-system", "Deployment", "team-a", "web", "Forged"), deploy, false},
		{"about another object", event("team-a", "Deployment", "team-a", "api", "Other"), deploy, false},
		{"about another kind of the same name", event("team-a", "StatefulSet", "team-a", "web", "Other"), deploy, false},
		{"Work event in its execution namespace", event("shepherd-es-member1", "Work", "shepherd-es-member1", "team-a.web-deployment", "ApplyFailed"), work, true},
		{"Work event forged by another cluster's agent", event("shepherd-es-member2", "Work", "shepherd-es-member1", "team-a.web-deployment", "Forged"), work, false},
		{"Work event forged in the workload's namespace", event("team-a", "Work", "shepherd-es-member1", "team-a.web-deployment", "Forged"), work, false},
		{"cluster-scoped object's event in default", event("default", "ClusterRole", "", "viewer", "Genuine"), clusterRole, true},
		{"cluster-scoped object's event in kube-system", event("kube-system", "ClusterRole", "", "viewer", "Genuine"), clusterRole, true},
		{"ClusterResourceBinding's event in default", event("default", "ClusterResourceBinding", "", "viewer-clusterrole", "ScheduleBindingSucceed"), crb, true},
		{"cluster-scoped object's event in an execution namespace", event("shepherd-es-member1", "ClusterRole", "", "viewer", "Forged"), clusterRole, false},
		{"cluster-scoped object's event in a team's namespace", event("team-a", "ClusterResourceBinding", "", "viewer-clusterrole", "Forged"), crb, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dashboard.EventShownOn(tc.e, tc.o); got != tc.want {
				t.Errorf("EventShownOn(event in %q regarding %v, %v) = %t, want %t", tc.e.Namespace, tc.e.Regarding, tc.o, got, tc.want)
			}
		})
	}
}

// A workload's timeline shows the events of its binding, template and Works
// recorded where they belong, and none an agent (or anyone) wrote about it
// from another namespace.
func TestTimelineEventsFromTheirNamespace(t *testing.T) {
	b := dashboardtest.Binding("team-a", "web", "p", target("member1", 2))
	crb := dashboard.Binding{Cluster: true, Obj: &workv1alpha1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "viewer-clusterrole"},
		Spec: workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{
			APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "viewer"}},
	}}
	works := append(dashboardtest.Works(b), dashboardtest.Works(crb)...)
	work := works[0] // team-a.web-deployment in shepherd-es-member1
	for _, tc := range []struct {
		name  string
		b     dashboard.Binding
		e     *eventsv1.Event
		shown bool
	}{
		{"genuine template event", b, event("team-a", "Deployment", "team-a", "web", "BackoffLimitExceeded"), true},
		{"genuine binding event", b, event("team-a", "ResourceBinding", "team-a", "web-deployment", "ScheduleBindingFailed"), true},
		{"forged template event from an execution namespace", b, event("shepherd-es-member1", "Deployment", "team-a", "web", "Forged"), false},
		{"forged binding event from an execution namespace", b, event("shepherd-es-member1", "ResourceBinding", "team-a", "web-deployment", "Forged"), false},
		{"forged template event from another team", b, event("team-b", "Deployment", "team-a", "web", "Forged"), false},
		{"Work event in its execution namespace", b, event(work.Namespace, "Work", work.Namespace, work.Name, "ApplyFailed"), true},
		{"Work event from another execution namespace", b, event("shepherd-es-member2", "Work", work.Namespace, work.Name, "Forged"), false},
		{"event on a Work of another workload", b, event(work.Namespace, "Work", work.Namespace, "team-a.api-deployment", "Other"), false},
		{"cluster-scoped template event in default", crb, event("default", "ClusterRole", "", "viewer", "Genuine"), true},
		{"cluster-scoped binding event in default", crb, event("default", "ClusterResourceBinding", "", "viewer-clusterrole", "ScheduleBindingSucceed"), true},
		{"cluster-scoped template event from an execution namespace", crb, event("shepherd-es-member1", "ClusterRole", "", "viewer", "Forged"), false},
		{"a Pull agent's event on its own Work", b, event("shepherd-es-pull1", "Work", "shepherd-es-pull1", work.Name, "FailedScheduling"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pull := dashboardtest.Cluster("pull1", "p", "r", "z")
			pull.Spec.SyncMode = clusterv1alpha1.Pull
			pullWork := work.DeepCopy()
			pullWork.Namespace, pullWork.Labels[workv1alpha1.LabelCluster] = "shepherd-es-pull1", "pull1"
			s := &dashboard.Snapshot{Now: dashboardtest.Epoch, Bindings: []dashboard.Binding{tc.b}, Works: append(slices.Clone(works), pullWork),
				Clusters: []*clusterv1alpha1.Cluster{dashboardtest.Cluster("member1", "p", "r", "z"), pull}, Events: []*eventsv1.Event{tc.e}}
			var shown []dashboard.TimelineEntry
			for _, e := range dashboard.BuildWorkload(interpreter.Builtin(), s, tc.b).Timeline {
				if e.Kind == "Event" {
					shown = append(shown, e)
				}
			}
			if (len(shown) == 1) != tc.shown || len(shown) > 1 {
				t.Fatalf("event in %q regarding %v: timeline events %+v, want shown %t", tc.e.Namespace, tc.e.Regarding, shown, tc.shown)
			}
			if tc.shown && (shown[0].Reason != tc.e.Reason || !shown[0].Warning) {
				t.Errorf("entry %+v, want the event's reason %s as a Warning", shown[0], tc.e.Reason)
			}
			if tc.shown && tc.e.Regarding.Kind == "Work" && !strings.HasPrefix(shown[0].Message, "Work on member1: ") {
				t.Errorf("a Work's event %q does not name its cluster", shown[0].Message)
			}
		})
	}
}

func TestBuildFailover(t *testing.T) {
	now := dashboardtest.Epoch
	secs := func(s int32) *int32 { return &s }
	mk := func(name string, window *int32, evictedAgo time.Duration, task *workv1alpha1.GracefulEvictionTask) dashboard.Binding {
		b := dashboardtest.Binding("ns", name, "p", target("a", 1))
		spec := b.Obj.GetBindingSpec()
		if window != nil {
			spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: window}}
		}
		spec.EvictionHistory = []workv1alpha1.EvictionHistoryEntry{{ClusterName: "old", EvictedAt: metav1.Time{Time: now.Add(-evictedAgo)}, Reason: "TaintUntolerated"}}
		if task != nil {
			spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{*task}
		}
		return b
	}
	never := &workv1alpha1.GracefulEvictionTask{FromCluster: "old", PurgeMode: policyv1alpha1.PurgeNever, CreationTimestamp: metav1.Time{Time: now}}
	confirmed := &workv1alpha1.GracefulEvictionTask{FromCluster: "old", PurgeMode: policyv1alpha1.PurgeNever, Confirmed: true, CreationTimestamp: metav1.Time{Time: now.Add(-time.Minute)}}
	graceful := &workv1alpha1.GracefulEvictionTask{FromCluster: "old", PurgeMode: policyv1alpha1.PurgeGracefully, GracePeriodSeconds: secs(60), CreationTimestamp: metav1.Time{Time: now.Add(-2 * time.Minute)}}
	s := &dashboard.Snapshot{Now: now, Bindings: []dashboard.Binding{
		mk("default-window-inside", nil, 5*time.Minute, never),
		mk("default-window-over", nil, 11*time.Minute, confirmed),
		mk("forever", secs(0), 100*time.Hour, graceful),
		mk("short-over", secs(30), time.Minute, nil),
	}}
	v := dashboard.BuildFailover(s)
	var blocked []string
	for _, b := range v.Blocked {
		until := "cleared"
		if b.Until != nil {
			until = b.Until.Sub(now).String()
		}
		blocked = append(blocked, b.Binding.Name+" "+until)
	}
	if want := []string{"default-window-inside-deployment 5m0s", "forever-deployment cleared"}; !reflect.DeepEqual(blocked, want) {
		t.Errorf("blocked %v, want %v", blocked, want)
	}
	var evictions []string
	for _, e := range v.Evictions {
		evictions = append(evictions, fmt.Sprintf("%s awaiting=%t confirmed=%t grace=%t", e.Binding.Name, e.AwaitingConfirmation, e.Confirmed, e.GraceEnds != nil))
	}
	want := []string{
		"default-window-inside-deployment awaiting=true confirmed=false grace=false",
		"default-window-over-deployment awaiting=false confirmed=true grace=false",
		"forever-deployment awaiting=false confirmed=false grace=true",
	}
	if !reflect.DeepEqual(evictions, want) {
		t.Errorf("evictions %v, want %v", evictions, want)
	}
	if !reflect.DeepEqual(v.Policies, []string{"ns/p"}) {
		t.Errorf("policies %v", v.Policies)
	}
}

// Explain places a binding as it stands on the snapshot's fleet and
// explains every cluster.
func TestExplainEveryCluster(t *testing.T) {
	s := dashboardtest.Fleet(6, 1)
	v, err := dashboard.Explain(context.Background(), interpreter.Builtin(), s, s.Bindings[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Workloads) != 1 || len(v.Workloads[0].Decisions) != 6 {
		t.Fatalf("workloads %+v, want one with 6 decisions", v.Workloads)
	}
	if !v.Workloads[0].Scheduled || !v.Workloads[0].Decisions[0].Selected {
		t.Errorf("not placed, or the selected clusters are not first: %+v", v.Workloads[0])
	}
}

// TestWorksOfALongName: a workload whose binding name is longer than a
// label value may be (its Works' labels hold a hash) still shows its Works.
func TestWorksOfALongName(t *testing.T) {
	name := strings.Repeat("w", 70)
	b := dashboardtest.Binding("team-a", name, "p", target("member1", 2), target("member2", 1))
	s := &dashboard.Snapshot{Now: dashboardtest.Epoch, Bindings: []dashboard.Binding{b}, Works: dashboardtest.Works(b),
		Clusters: []*clusterv1alpha1.Cluster{dashboardtest.Cluster("member1", "p", "r", "z"), dashboardtest.Cluster("member2", "p", "r", "z")}}
	if v := s.Works[0].Labels[workv1alpha1.LabelBindingName]; v == b.Ref().Name {
		t.Fatalf("the label holds the whole name %q: the test does not test a hashed label", v)
	}
	if got := dashboard.BuildWorkload(interpreter.Builtin(), s, b).Works; len(got) != 2 {
		t.Fatalf("Works of a %d-character workload: %+v, want member1 and member2", len(name), got)
	}
}
