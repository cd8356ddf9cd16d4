package descheduler

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
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
				if !reflect.DeepEqual(d.moves[i], tc.want.moves[i]) {
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

// pending is a component with n pods unschedulable since at.
func pending(name string, n int32, at time.Time) workv1alpha1.UnschedulableComponent {
	return workv1alpha1.UnschedulableComponent{Name: name, Replicas: n, Since: metav1.NewTime(at)}
}

// stuckComponents is an aggregated status item whose unschedulable pods
// are those of components, the oldest since at.
func stuckComponents(cluster string, at time.Time, components ...workv1alpha1.UnschedulableComponent) workv1alpha1.AggregatedStatusItem {
	var n int32
	for _, c := range components {
		n += c.Replicas
	}
	item := stuck(cluster, n, at)
	item.UnschedulableComponents = components
	return item
}

// gang is a binding's spec of a workload of two components on targets.
func gang(p *policyv1alpha1.Placement, targets ...workv1alpha1.TargetCluster) *workv1alpha1.BindingSpec {
	return &workv1alpha1.BindingSpec{Placement: p, Clusters: slices.Clone(targets),
		Components: []workv1alpha1.Component{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 4}}}
}

// running is a target running the whole gang, components recorded.
func running(name string) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 4}}}
}

func TestDecideGang(t *testing.T) {
	const thr = 5 * time.Minute
	twoClusters := []workv1alpha1.TargetCluster{running("a"), running("b")}
	for _, tc := range []struct {
		name        string
		placement   *policyv1alpha1.Placement
		targets     []workv1alpha1.TargetCluster
		items       []workv1alpha1.AggregatedStatusItem
		annotations map[string]string
		evicting    bool
		reschedule  *metav1.Time
		now         time.Time
		// moved are the clusters the gang leaves whole, in order; held
		// the reason of a report instead; next when to look again.
		moved    []string
		held     string
		next     time.Time
		recorded string
		message  string
	}{
		{name: "stuck past the threshold: moved whole from that cluster", placement: duplicated, targets: []workv1alpha1.TargetCluster{running("b")},
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 3, t0)}, now: t0.Add(thr),
			moved:   []string{"b"},
			message: "Moved the gang whole from b (3 of its replicas unschedulable there); unschedulable for longer than 5m0s; a gang runs whole or not at all: the scheduler places it again, the clusters it left kept out for 10m0s"},
		{name: "the components that do not fit are named, with their replicas in the spec", placement: duplicated, targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{{ClusterName: "a"}, stuckComponents("b", t0, pending("head", 1, t0.Add(time.Minute)), pending("workers", 2, t0))},
			now:   t0.Add(thr), moved: []string{"b"},
			message: `Moved the gang whole from b (3 of its replicas unschedulable there; component "head": 1 of 1 Pending since 2026-03-08T08:01:00Z, ` +
				`component "workers": 2 of 4 Pending since 2026-03-08T08:00:00Z); unschedulable for longer than 5m0s; a gang runs whole or not at all: ` +
				`the scheduler places it again, the clusters it left kept out for 10m0s`},
		{name: "before the threshold: nothing, look again when due", placement: duplicated, targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 3, t0)}, now: t0.Add(thr - time.Second),
			next: t0.Add(thr)},
		{name: "stuck in one of two clusters: moves only from that one", placement: duplicated, targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{{ClusterName: "a"}, stuck("b", 2, t0)}, now: t0.Add(thr),
			moved: []string{"b"}},
		{name: "stuck in both, one not yet due: only the due one", placement: duplicated, targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0.Add(time.Minute)), stuck("b", 2, t0)}, now: t0.Add(thr),
			moved: []string{"b"}},
		{name: "stuck in both past the threshold: both, by cluster name", placement: duplicated,
			targets: []workv1alpha1.TargetCluster{running("b"), running("a")},
			items:   []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0), stuck("a", 1, t0)}, now: t0.Add(thr),
			moved: []string{"a", "b"}},
		{name: "divided by dynamic weights: moved whole, never lowered", placement: dynamic,
			targets: []workv1alpha1.TargetCluster{{Name: "a", Replicas: 4, Components: running("a").Components}, {Name: "b", Replicas: 4, Components: running("b").Components}},
			items:   []workv1alpha1.AggregatedStatusItem{stuck("b", 1, t0)}, now: t0.Add(thr),
			moved: []string{"b"}},
		{name: "static weights do not hold a gang", placement: static, targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0)}, now: t0.Add(thr),
			moved: []string{"a"}},
		{name: "bad input: targets without components are still moved whole", placement: duplicated,
			targets: []workv1alpha1.TargetCluster{{Name: "a"}, {Name: "b", Replicas: 2}},
			items:   []workv1alpha1.AggregatedStatusItem{stuck("b", 5, t0)}, now: t0.Add(thr),
			moved: []string{"b"}},
		{name: "per-policy threshold", placement: withThreshold(dynamic, 30), targets: twoClusters,
			items: []workv1alpha1.AggregatedStatusItem{stuck("a", 1, t0)}, now: t0.Add(30 * time.Second),
			moved: []string{"a"}},
		{name: "inactive targets are not touched", placement: duplicated,
			targets: []workv1alpha1.TargetCluster{running("a"), {Name: "b", State: workv1alpha1.TargetUnscheduled}},
			items:   []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr)},
		{name: "a failover moves the workload: held", placement: duplicated, targets: twoClusters, evicting: true,
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			held:    ReasonHeld,
			message: "Replicas Pending unschedulable: 2 in b; not moved while a failover moves the workload"},
		{name: "held: the report names the components", placement: duplicated, targets: twoClusters, evicting: true,
			items: []workv1alpha1.AggregatedStatusItem{stuckComponents("b", t0, pending("workers", 2, t0))}, now: t0.Add(thr),
			held:    ReasonHeld,
			message: `Replicas Pending unschedulable: 2 in b (component "workers": 2 of 4 Pending since 2026-03-08T08:00:00Z); not moved while a failover moves the workload`},
		{name: "a reschedule is pending: held", placement: duplicated, targets: twoClusters, reschedule: &metav1.Time{Time: t0.Add(time.Hour)},
			items: []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(2 * time.Hour),
			held: ReasonHeld},
		{name: "moved within the threshold: wait, the move still reported", placement: duplicated, targets: twoClusters,
			annotations: map[string]string{workv1alpha1.AnnotationDescheduledAt: t0.Add(4 * time.Minute).Format(time.RFC3339), workv1alpha1.AnnotationDescheduled: "the gang whole from c (1 of its replicas unschedulable there); x"},
			items:       []workv1alpha1.AggregatedStatusItem{stuck("b", 2, t0)}, now: t0.Add(thr),
			next: t0.Add(9 * time.Minute), recorded: "the gang whole from c (1 of its replicas unschedulable there); x",
			message: "Moved the gang whole from c (1 of its replicas unschedulable there); x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := gang(tc.placement, tc.targets...)
			spec.RescheduleTriggeredAt = tc.reschedule
			if tc.evicting {
				spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "c"}}
			}
			status := &workv1alpha1.BindingStatus{AggregatedStatus: tc.items, LastScheduledTime: &metav1.Time{Time: t0}}
			d := decide(spec, status, tc.annotations, thr, tc.now)
			var moved []string
			for _, m := range d.moves {
				if !m.whole || m.keep != 0 {
					t.Errorf("move %+v: a gang moves only whole", m)
				}
				moved = append(moved, m.cluster)
			}
			if strings.Join(moved, ",") != strings.Join(tc.moved, ",") {
				t.Fatalf("moved from %v, want %v", moved, tc.moved)
			}
			if !d.next.Equal(tc.next) || d.recorded != tc.recorded {
				t.Errorf("next %v recorded %q, want %v %q", d.next, d.recorded, tc.next, tc.recorded)
			}
			if (len(d.reports) > 0) != (tc.held != "") || (tc.held != "" && d.reason != tc.held) {
				t.Errorf("reports %+v reason %q, want held %q", d.reports, d.reason, tc.held)
			}
			c, ok := condition(d, 1)
			if tc.message != "" && c.Message != tc.message {
				t.Errorf("condition message\n %q, want\n %q", c.Message, tc.message)
			}
			if len(moved) > 0 || tc.recorded != "" {
				if !ok || c.Status != metav1.ConditionTrue || c.Reason != ReasonGangMoved {
					t.Errorf("condition %+v, want True %s", c, ReasonGangMoved)
				}
			}
			before := spec.DeepCopy()
			if len(d.moves) == 0 {
				return
			}
			ann := apply(spec, tc.annotations, d, tc.now)
			if ann[workv1alpha1.AnnotationDescheduled] != describe(d) || ann[workv1alpha1.AnnotationDescheduledAt] == "" {
				t.Errorf("annotations %v", ann)
			}
			assertMovedWhole(t, before, spec, tc.moved, tc.now)
		})
	}
}

// assertMovedWhole checks that apply took the gang off exactly the moved
// clusters, as an eviction, and changed no target's replicas or components.
func assertMovedWhole(t *testing.T, before, after *workv1alpha1.BindingSpec, moved []string, now time.Time) {
	t.Helper()
	for i, tgt := range after.Clusters {
		was := before.Clusters[i]
		if tgt.Replicas != was.Replicas || len(tgt.Components) != len(was.Components) {
			t.Errorf("target %s: replicas %d components %v, was %d %v: never lowered in part", tgt.Name, tgt.Replicas, tgt.Components, was.Replicas, was.Components)
		}
		wantActive := bindingutil.IsActive(was) && !slices.Contains(moved, tgt.Name)
		if bindingutil.IsActive(tgt) != wantActive {
			t.Errorf("target %s active = %v, want %v", tgt.Name, bindingutil.IsActive(tgt), wantActive)
		}
	}
	if len(after.EvictionHistory) != len(moved) || len(after.GracefulEvictionTasks) != len(moved) {
		t.Fatalf("history %+v tasks %+v, want one of each per cluster moved from", after.EvictionHistory, after.GracefulEvictionTasks)
	}
	for i, name := range moved {
		h, task := after.EvictionHistory[i], after.GracefulEvictionTasks[i]
		if h.ClusterName != name || h.Reason != EvictionReason || !h.EvictedAt.Time.Equal(now) || !strings.Contains(h.Message, "moved whole") {
			t.Errorf("history entry %+v", h)
		}
		if task.FromCluster != name || task.Producer != Producer || task.PurgeMode != policyv1alpha1.PurgeGracefully || *task.GracePeriodSeconds != policyv1alpha1.DefaultGracePeriodSeconds {
			t.Errorf("task %+v", task)
		}
	}
}
