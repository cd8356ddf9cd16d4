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
