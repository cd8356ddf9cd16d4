package descheduler

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var t0 = time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)

func divided(pref policyv1alpha1.ReplicaDivisionPreference, w *policyv1alpha1.ClusterPreferences) *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref, WeightPreference: w}}
}

var (
	dynamic    = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas})
	aggregated = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, nil)
	static     = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{{Weight: 1}}})
	equal      = divided("", nil)
	duplicated = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}
)

func withThreshold(p *policyv1alpha1.Placement, secs int32) *policyv1alpha1.Placement {
	p = p.DeepCopy()
	p.ReplicaScheduling.UnschedulableThresholdSeconds = &secs
	return p
}

// stuck is an aggregated status item with n replicas unschedulable since at.
func stuck(cluster string, n int32, at time.Time) workv1alpha1.AggregatedStatusItem {
	return workv1alpha1.AggregatedStatusItem{ClusterName: cluster, UnschedulableReplicas: n, UnschedulableSince: &metav1.Time{Time: at}}
}

func TestDecide(t *testing.T) {
	const thr = 5 * time.Minute
	targets := []workv1alpha1.TargetCluster{{Name: "a", Replicas: 4}, {Name: "b", Replicas: 4}}
	type want struct {
		moves    []move
		reports  []report
		reason   string
		why      string
		next     time.Time
		recorded string
	}
	for _, tc := range []struct {
		name        string
		placement   *policyv1alpha1.Placement
		targets     []workv1alpha1.TargetCluster
		items       []workv1alpha1.AggregatedStatusItem
		annotations map[string]string
		evicting    bool
		reschedule  *metav1.Time
		lastSched   *metav1.Time
		now         time.Time
		want        want
	}{
		{name: "nothing unschedulable", placement: dynamic, items: []workv1alpha1.AggregatedStatusItem{{ClusterName: "a"}}, now: t0},
		{name: "dynamic weights: past the threshold, b keeps the replicas it runs", placement: dynamic,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 3, t0)}, now: t0.Add(thr + time.Second),
			want: want{moves: []move{{cluster: "b", count: 3, keep: 1, since: t0}}, reason: ReasonMoved, why: "longer than 5m0s"}},
		{name: "aggregated moves too", placement: aggregated,
			items: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0)}, now: t0.Add(thr),
			want: want{moves: []move{{cluster: "a", count: 1, keep: 3, since: t0}}, reason: ReasonMoved}},
		{name: "before the threshold: nothing yet, look again when due", placement: dynamic,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 3, t0)}, now: t0.Add(time.Minute),
			want: want{next: t0.Add(thr)}},
		{name: "never below zero: more unschedulable than assigned (a surge)", placement: dynamic,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 6, t0)}, now: t0.Add(thr),
			want: want{moves: []move{{cluster: "b", count: 4, keep: 0, since: t0}}, reason: ReasonMoved}},
		{name: "per-policy threshold", placement: withThreshold(dynamic, 5),
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(5 * time.Second),
			want: want{moves: []move{{cluster: "b", count: 2, keep: 2, since: t0}}, reason: ReasonMoved, why: "longer than 5s"}},
		{name: "per-policy threshold not reached", placement: withThreshold(dynamic, 600),
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{next: t0.Add(600 * time.Second)}},
		{name: "only the clusters past the threshold move", placement: dynamic,
			items: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0.Add(4*time.Minute)), stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{moves: []move{{cluster: "b", count: 2, keep: 2, since: t0}}, reason: ReasonMoved}},
		{name: "inactive targets are not touched", placement: dynamic,
			targets: []workv1alpha1.TargetCluster{{Name: "a", Replicas: 4}, {Name: "b", Replicas: 4, State: workv1alpha1.TargetUnscheduled}},
			items:   []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr)},
		{name: "static weights: report, do not move", placement: static,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonNotMovable, why: "static weights"}},
		{name: "equal division: report, do not move", placement: equal,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonNotMovable, why: "equal weights"}},
		{name: "duplicated: report, do not move", placement: duplicated,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0,
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonNotMovable, why: "Duplicated"}},
		{name: "no replica scheduling is Duplicated", placement: &policyv1alpha1.Placement{},
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonNotMovable, why: "Duplicated"}},
		{name: "a failover moves the workload: held", placement: dynamic, evicting: true,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonHeld, why: "failover"}},
		{name: "a reschedule is pending: held", placement: dynamic, reschedule: &metav1.Time{Time: t0.Add(time.Hour)}, lastSched: &metav1.Time{Time: t0},
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(2 * time.Hour),
			want: want{reports: []report{{cluster: "b", count: 2}}, reason: ReasonHeld, why: "reschedule"}},
		{name: "a served reschedule does not hold", placement: dynamic, reschedule: &metav1.Time{Time: t0}, lastSched: &metav1.Time{Time: t0.Add(time.Minute)},
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{moves: []move{{cluster: "b", count: 2, keep: 2, since: t0}}, reason: ReasonMoved}},
		{name: "moved within the threshold: wait (counts may predate the move)", placement: dynamic,
			annotations: map[string]string{workv1alpha1.AnnotationDescheduledAt: t0.Add(4 * time.Minute).Format(time.RFC3339)},
			items:       []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{next: t0.Add(9 * time.Minute)}},
		{name: "within the threshold after a move, the move is still reported", placement: dynamic,
			annotations: map[string]string{workv1alpha1.AnnotationDescheduledAt: t0.Add(4 * time.Minute).Format(time.RFC3339), workv1alpha1.AnnotationDescheduled: "2 from b (keeps 2); x"},
			items:       []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{next: t0.Add(9 * time.Minute), recorded: "2 from b (keeps 2); x"}},
		{name: "moved longer ago than the threshold: moves again", placement: dynamic,
			annotations: map[string]string{workv1alpha1.AnnotationDescheduledAt: t0.Format(time.RFC3339)},
			items:       []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			want: want{moves: []move{{cluster: "b", count: 2, keep: 2, since: t0}}, reason: ReasonMoved}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &workv1alpha1.BindingSpec{Placement: tc.placement, Clusters: targets, RescheduleTriggeredAt: tc.reschedule}
			if tc.targets != nil {
				spec.Clusters = tc.targets
			}
			if tc.evicting {
				spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "a"}}
			}
			status := &workv1alpha1.BindingStatus{AggregatedStatus: tc.items, LastScheduledTime: tc.lastSched}
			d := decide(spec, status, tc.annotations, thr, tc.now)
			if len(d.moves) != len(tc.want.moves) || len(d.reports) != len(tc.want.reports) {
				t.Fatalf("moves %+v reports %+v, want %+v %+v", d.moves, d.reports, tc.want.moves, tc.want.reports)
			}
			for i := range d.moves {
				if d.moves[i] != tc.want.moves[i] {
					t.Errorf("move %d = %+v, want %+v", i, d.moves[i], tc.want.moves[i])
				}
			}
			for i := range d.reports {
				if d.reports[i] != tc.want.reports[i] {
					t.Errorf("report %d = %+v, want %+v", i, d.reports[i], tc.want.reports[i])
				}
			}
			if d.reason != tc.want.reason || !strings.Contains(d.why, tc.want.why) {
				t.Errorf("reason %q why %q, want %q containing %q", d.reason, d.why, tc.want.reason, tc.want.why)
			}
			if !d.next.Equal(tc.want.next) {
				t.Errorf("next = %v, want %v", d.next, tc.want.next)
			}
			if d.recorded != tc.want.recorded {
				t.Errorf("recorded = %q, want %q", d.recorded, tc.want.recorded)
			}
			if _, ok := condition(d, 1); ok != (len(d.moves)+len(d.reports) > 0 || d.recorded != "") {
				t.Errorf("condition present = %v", ok)
			}
		})
	}
}

func TestApply(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "a", Replicas: 4}, {Name: "b", Replicas: 4}}}
	ann := apply(spec, map[string]string{"x": "y"}, decision{moves: []move{{cluster: "b", count: 3, keep: 1}}, why: "w"}, t0)
	if spec.Clusters[0].Replicas != 4 || spec.Clusters[1].Replicas != 1 {
		t.Fatalf("targets %+v", spec.Clusters)
	}
	if ann["x"] != "y" || ann[workv1alpha1.AnnotationDescheduledAt] != "2026-03-08T08:00:00Z" || ann[workv1alpha1.AnnotationDescheduled] != "3 from b (keeps 1); w" {
		t.Fatalf("annotations %v", ann)
	}
	c, _ := condition(decision{moves: []move{{cluster: "b", count: 3, keep: 1}}, why: "unschedulable for longer than 5m0s"}, 2)
	if c.Status != metav1.ConditionTrue || c.Message != "Moved unschedulable replicas: 3 from b (keeps 1); unschedulable for longer than 5m0s" {
		t.Fatalf("condition %+v", c)
	}
}
