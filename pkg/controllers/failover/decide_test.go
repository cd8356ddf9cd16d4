package failover

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) *metav1.Time {
	t := metav1.NewTime(t0.Add(time.Duration(sec) * time.Second))
	return &t
}

func appSpec(app policyv1alpha1.ApplicationFailoverBehavior) *workv1alpha1.BindingSpec {
	return &workv1alpha1.BindingSpec{
		Failover: &policyv1alpha1.FailoverBehavior{Application: &app},
		Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 2, State: workv1alpha1.TargetBound}, {Name: "m2", Replicas: 2, State: workv1alpha1.TargetBound}},
	}
}

func TestApplicationEvictions(t *testing.T) {
	unhealthy := workv1alpha1.AggregatedStatusItem{ClusterName: "m1", Health: policyv1alpha1.ResourceUnhealthy, UnhealthySince: at(0), FirstCollectedTime: at(-100), Settled: true}
	cases := []struct {
		name    string
		app     policyv1alpha1.ApplicationFailoverBehavior
		item    workv1alpha1.AggregatedStatusItem
		now     int
		evict   bool
		requeue time.Duration
	}{
		{"within toleration", policyv1alpha1.ApplicationFailoverBehavior{DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](5)}}, unhealthy, 3, false, 2 * time.Second},
		{"past toleration", policyv1alpha1.ApplicationFailoverBehavior{DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](5)}}, unhealthy, 5, true, 0},
		{"default toleration 300", policyv1alpha1.ApplicationFailoverBehavior{}, unhealthy, 299, false, time.Second},
		{"unknown never", policyv1alpha1.ApplicationFailoverBehavior{}, workv1alpha1.AggregatedStatusItem{ClusterName: "m1", Health: policyv1alpha1.ResourceUnknown}, 10000, false, 0},
		{"never healthy with healthyState", policyv1alpha1.ApplicationFailoverBehavior{PreConditions: &policyv1alpha1.PreConditions{HealthyState: policyv1alpha1.ResourceHealthy}},
			func() workv1alpha1.AggregatedStatusItem { i := unhealthy; i.Settled = false; return i }(), 10000, false, 0},
		{"delay holds back", policyv1alpha1.ApplicationFailoverBehavior{PreConditions: &policyv1alpha1.PreConditions{DelaySeconds: ptr.To[int32](200)}, DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](5)}},
			unhealthy, 50, false, 50 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := appSpec(tc.app)
			status := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{tc.item}}
			d := &deadlines{}
			now := t0.Add(time.Duration(tc.now) * time.Second)
			evs := applicationEvictions(spec, status, now, d)
			if (len(evs) == 1) != tc.evict {
				t.Fatalf("evictions %+v, want evict=%v", evs, tc.evict)
			}
			if got := d.after(now); got != tc.requeue {
				t.Errorf("requeue %s, want %s", got, tc.requeue)
			}
		})
	}
}

func TestEvictAndFinishTasks(t *testing.T) {
	// Each of Karmada's current names behaves as its former name.
	modes := []policyv1alpha1.PurgeMode{
		policyv1alpha1.PurgeImmediately, policyv1alpha1.PurgeDirectly,
		policyv1alpha1.PurgeGraciously, policyv1alpha1.PurgeGracefully, policyv1alpha1.PurgeNever,
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			spec := appSpec(policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: mode})
			evict(spec, &workv1alpha1.BindingStatus{}, []eviction{{cluster: "m1", reason: ReasonApplicationFailure, purge: mode}}, metav1.NewTime(t0))
			if spec.Clusters[0].State != workv1alpha1.TargetUnscheduled || len(spec.EvictionHistory) != 1 {
				t.Fatalf("targets %+v history %+v", spec.Clusters, spec.EvictionHistory)
			}
			wantTasks := 1
			if mode.Direct() {
				wantTasks = 0
			}
			if len(spec.GracefulEvictionTasks) != wantTasks {
				t.Fatalf("tasks %+v", spec.GracefulEvictionTasks)
			}
			if wantTasks == 1 && spec.GracefulEvictionTasks[0].PurgeMode != mode {
				t.Fatalf("task purge mode %q, want the one written, %q", spec.GracefulEvictionTasks[0].PurgeMode, mode)
			}
			if wantTasks == 1 && mode.Graceful() != (spec.GracefulEvictionTasks[0].GracePeriodSeconds != nil) {
				t.Fatalf("grace period %v for mode %s", spec.GracefulEvictionTasks[0].GracePeriodSeconds, mode)
			}
			if wantTasks == 0 {
				return
			}
			notYet := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{{ClusterName: "m2", Health: policyv1alpha1.ResourceUnhealthy}}}
			d := &deadlines{}
			if done := finishTasks(spec, notYet, t0.Add(time.Second), d); len(done) != 0 {
				t.Fatalf("finished early: %+v", done)
			}
			healthy := &workv1alpha1.BindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{{ClusterName: "m2", Health: policyv1alpha1.ResourceHealthy}}}
			done := finishTasks(spec, healthy, t0.Add(time.Second), &deadlines{})
			if mode == policyv1alpha1.PurgeNever {
				if len(done) != 0 {
					t.Fatal("a Never task went without confirmation")
				}
				if c, ok := pendingCondition(spec.GracefulEvictionTasks, 1); !ok || c.Reason != ReasonAwaitingConfirmation {
					t.Fatalf("condition %+v", c)
				}
				spec.GracefulEvictionTasks[0].Confirmed = true
				done = finishTasks(spec, healthy, t0.Add(time.Second), &deadlines{})
			}
			if len(done) != 1 || len(spec.GracefulEvictionTasks) != 0 {
				t.Fatalf("done %+v tasks %+v", done, spec.GracefulEvictionTasks)
			}
		})
	}
}

func TestGracePeriodEnds(t *testing.T) {
	spec := appSpec(policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeGraciously, GracePeriodSeconds: ptr.To[int32](30)})
	evict(spec, &workv1alpha1.BindingStatus{}, []eviction{{cluster: "m1", purge: policyv1alpha1.PurgeGraciously, grace: ptr.To[int32](30)}}, metav1.NewTime(t0))
	d := &deadlines{}
	if done := finishTasks(spec, &workv1alpha1.BindingStatus{}, t0.Add(10*time.Second), d); len(done) != 0 || d.after(t0.Add(10*time.Second)) != 20*time.Second {
		t.Fatalf("done %v, requeue %s", done, d.after(t0.Add(10*time.Second)))
	}
	if done := finishTasks(spec, &workv1alpha1.BindingStatus{}, t0.Add(30*time.Second), &deadlines{}); len(done) != 1 {
		t.Fatal("grace period ended but the task stayed")
	}
}

func TestPruneHistory(t *testing.T) {
	spec := appSpec(policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: ptr.To[int32](60)})
	spec.EvictionHistory = []workv1alpha1.EvictionHistoryEntry{{ClusterName: "old", EvictedAt: *at(-61)}, {ClusterName: "new", EvictedAt: *at(-10)}}
	d := &deadlines{}
	if got := pruneHistory(spec, t0, d); len(got) != 1 || got[0] != "old" || d.after(t0) != 50*time.Second {
		t.Fatalf("pruned %v requeue %s", got, d.after(t0))
	}
	spec.Failover.Application.BlockPredecessorSeconds = ptr.To[int32](0)
	if got := pruneHistory(spec, t0.Add(time.Hour), &deadlines{}); len(got) != 0 {
		t.Fatalf("window 0 pruned %v", got)
	}
}

func TestClusterEvictions(t *testing.T) {
	taint := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: at(0)}
	clusters := map[string]*clusterv1alpha1.Cluster{"m1": {Spec: clusterv1alpha1.ClusterSpec{Taints: []corev1.Taint{taint}}}}
	tol := func(secs *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	cases := []struct {
		name        string
		tolerations []corev1.Toleration
		now         int
		evict       bool
		requeue     time.Duration
	}{
		{"untolerated", nil, 0, true, 0},
		{"tolerated forever", tol(nil), 10000, false, 0},
		{"tolerated for a while", tol(ptr.To[int64](30)), 10, false, 20 * time.Second},
		{"toleration ran out", tol(ptr.To[int64](30)), 30, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := appSpec(policyv1alpha1.ApplicationFailoverBehavior{})
			spec.Failover = nil
			spec.Placement = &policyv1alpha1.Placement{ClusterTolerations: tc.tolerations}
			d := &deadlines{}
			now := t0.Add(time.Duration(tc.now) * time.Second)
			evs := clusterEvictions(spec, clusters, now, d)
			if (len(evs) == 1) != tc.evict || d.after(now) != tc.requeue {
				t.Fatalf("evictions %+v requeue %s", evs, d.after(now))
			}
			if tc.evict && evs[0].purge != policyv1alpha1.PurgeImmediately {
				t.Errorf("purge %s, want the cluster default Immediately", evs[0].purge)
			}
		})
	}
}
