package descheduler

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/clustereviction"
)

// TestGangKeptOut follows a gang's move into the scheduler: the cluster it
// left is refused by the ClusterEviction filter while the old copy is kept,
// then by the eviction history for the block window, and not after it.
func TestGangKeptOut(t *testing.T) {
	const thr = 5 * time.Minute
	spec := gang(duplicated, running("a"), running("b"))
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{stuck("b", 4, t0)}}
	now := t0.Add(thr)
	d := decide(spec, status, nil, thr, now)
	apply(spec, nil, d, now)

	p, _ := clustereviction.New(nil)
	snap := fwtest.Snapshot(t, framework.ClusterInfo{Name: "a"}, framework.ClusterInfo{Name: "b"}, framework.ClusterInfo{Name: "c"})
	refused := func(at time.Time) []string {
		w := &framework.Workload{Now: at, GracefulEvictionTasks: spec.GracefulEvictionTasks, EvictionHistory: spec.EvictionHistory, Failover: spec.Failover}
		got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
		var out []string
		for _, name := range []string{"a", "b", "c"} {
			if st := got[name]; st != nil {
				out = append(out, name+": "+st.Message())
			}
		}
		return out
	}
	for _, step := range []struct {
		name string
		at   time.Time
		want string
	}{
		{name: "old copy kept", at: now.Add(time.Minute), want: "b: workload is being evicted from the cluster (GangUnschedulable)"},
		{name: "old copy gone, history blocks", at: now.Add(9 * time.Minute), want: "b: workload was evicted from the cluster (GangUnschedulable); blocked for another 1m0s"},
		{name: "block window over", at: now.Add(10 * time.Minute), want: ""},
	} {
		if step.name == "old copy gone, history blocks" {
			spec.GracefulEvictionTasks = nil // failover finished the task
		}
		if got := strings.Join(refused(step.at), "; "); got != step.want {
			t.Errorf("%s: refused %q, want %q", step.name, got, step.want)
		}
	}
}

func TestGangPolicyWindows(t *testing.T) {
	const thr = time.Minute
	for _, tc := range []struct {
		name      string
		failover  *policyv1alpha1.FailoverBehavior
		wantWhy   string
		wantGrace int32
	}{
		{name: "defaults", wantWhy: "kept out for 10m0s", wantGrace: policyv1alpha1.DefaultGracePeriodSeconds},
		{name: "the policy's block window and grace period",
			failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: ptr.To[int32](120), GracePeriodSeconds: ptr.To[int32](30)}},
			wantWhy:  "kept out for 2m0s", wantGrace: 30},
		{name: "blocked until cleared",
			failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: ptr.To[int32](0)}},
			wantWhy:  "kept out until the eviction history is cleared", wantGrace: policyv1alpha1.DefaultGracePeriodSeconds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := gang(duplicated, running("a"))
			spec.Failover = tc.failover
			status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0)}}
			d := decide(spec, status, nil, thr, t0.Add(thr))
			if !strings.HasSuffix(d.why, tc.wantWhy) {
				t.Errorf("why %q, want it to end with %q", d.why, tc.wantWhy)
			}
			apply(spec, nil, d, t0.Add(thr))
			if len(spec.GracefulEvictionTasks) != 1 || *spec.GracefulEvictionTasks[0].GracePeriodSeconds != tc.wantGrace {
				t.Fatalf("tasks %+v, want grace period %d", spec.GracefulEvictionTasks, tc.wantGrace)
			}
			if note := gangNote(spec, d.moves[0], d.why); !strings.Contains(note, "Moved the gang whole from cluster a: 1 of its replicas unschedulable there since 2026-03-08T08:00:00Z") {
				t.Errorf("event note %q", note)
			}
		})
	}
}

// TestPendingComponents: the components a cluster cannot run are named in
// the order it reports them, each with its replicas in the binding's
// spec; a component the spec does not list is named without a total
// (bad input), none gives "" (a kind whose pods are not told apart), and
// past maxNamedComponents the rest are counted.
func TestPendingComponents(t *testing.T) {
	spec := []workv1alpha1.Component{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}
	for _, tc := range []struct {
		name string
		in   []workv1alpha1.UnschedulableComponent
		want string
	}{
		{"none", nil, ""},
		{"one", []workv1alpha1.UnschedulableComponent{pending("workers", 2, t0)}, `component "workers": 2 of 4 Pending since 2026-03-08T08:00:00Z`},
		{"in the order reported", []workv1alpha1.UnschedulableComponent{pending("ray-head", 1, t0.Add(time.Hour)), pending("workers", 4, t0)},
			`component "ray-head": 1 of 1 Pending since 2026-03-08T09:00:00Z, component "workers": 4 of 4 Pending since 2026-03-08T08:00:00Z`},
		{"not in the spec", []workv1alpha1.UnschedulableComponent{pending("gone", 3, t0)}, `component "gone": 3 Pending since 2026-03-08T08:00:00Z`},
		{"past the names shown, counted", []workv1alpha1.UnschedulableComponent{
			pending("a", 1, t0), pending("b", 1, t0), pending("c", 1, t0), pending("d", 1, t0), pending("e", 1, t0), pending("f", 1, t0)},
			`component "a": 1 Pending since 2026-03-08T08:00:00Z, component "b": 1 Pending since 2026-03-08T08:00:00Z, ` +
				`component "c": 1 Pending since 2026-03-08T08:00:00Z, component "d": 1 Pending since 2026-03-08T08:00:00Z, 2 more components`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pendingComponents(spec, tc.in); got != tc.want {
				t.Errorf("got\n %q, want\n %q", got, tc.want)
			}
		})
	}
}

// TestGangMessagesNameComponents: the event and the eviction of a gang's
// move off a cluster name the components that do not fit there.
func TestGangMessagesNameComponents(t *testing.T) {
	const thr = time.Minute
	spec := gang(duplicated, running("a"))
	status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{stuckComponents("a", t0, pending("workers", 3, t0))}}
	d := decide(spec, status, nil, thr, t0.Add(thr))
	apply(spec, nil, d, t0.Add(thr))
	const named = `component "workers": 3 of 4 Pending since 2026-03-08T08:00:00Z`
	if note := gangNote(spec, d.moves[0], d.why); !strings.HasPrefix(note, "Moved the gang whole from cluster a: 3 of its replicas unschedulable there since 2026-03-08T08:00:00Z; "+named+" (") {
		t.Errorf("event note %q", note)
	}
	if h := spec.EvictionHistory; len(h) != 1 || h[0].Message != "3 replicas of the gang unschedulable since 2026-03-08T08:00:00Z, longer than 1m0s: moved whole; "+named {
		t.Errorf("history %+v", h)
	}
	if tasks := spec.GracefulEvictionTasks; len(tasks) != 1 || !strings.HasSuffix(tasks[0].Message, named) {
		t.Errorf("tasks %+v", tasks)
	}
}
