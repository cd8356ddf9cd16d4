package binding

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

const (
	sched = workv1alpha1.TargetScheduled
	bound = workv1alpha1.TargetBound
	unsch = workv1alpha1.TargetUnscheduled
)

func tc(name string, state workv1alpha1.TargetState) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Replicas: 1, State: state}
}

func work(generation int64, cond *metav1.Condition) *workv1alpha1.Work {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
	if cond != nil {
		c := *cond
		c.Type = workv1alpha1.WorkConditionApplied
		w.Status.Conditions = []metav1.Condition{c}
	}
	return w
}

func TestObserve(t *testing.T) {
	deleting := work(1, &metav1.Condition{Status: metav1.ConditionTrue})
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name string
		w    *workv1alpha1.Work
		want workState
	}{
		{name: "missing", w: nil, want: workState{}},
		{name: "no condition", w: work(1, nil), want: workState{exists: true}},
		{name: "applied", w: work(2, &metav1.Condition{Status: metav1.ConditionTrue, ObservedGeneration: 2}), want: workState{exists: true, applied: true}},
		{name: "applied without observed generation", w: work(2, &metav1.Condition{Status: metav1.ConditionTrue}), want: workState{exists: true, applied: true}},
		{name: "applied an older spec", w: work(3, &metav1.Condition{Status: metav1.ConditionTrue, ObservedGeneration: 2}), want: workState{exists: true}},
		{name: "failed", w: work(1, &metav1.Condition{Status: metav1.ConditionFalse, Message: "boom"}), want: workState{exists: true, failed: true, message: "boom"}},
		{name: "deleting", w: deleting, want: workState{exists: true, deleting: true, applied: true}},
	}
	for _, tt := range tests {
		if got := observe(tt.w); got != tt.want {
			t.Errorf("%s: observe = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestNextTargets(t *testing.T) {
	applied := workState{exists: true, applied: true}
	tests := []struct {
		name    string
		targets []workv1alpha1.TargetCluster
		works   map[string]workState
		want    []workv1alpha1.TargetCluster
		changed bool
	}{
		{name: "scheduled without work", targets: []workv1alpha1.TargetCluster{tc("a", sched)},
			want: []workv1alpha1.TargetCluster{tc("a", sched)}},
		{name: "scheduled with unapplied work", targets: []workv1alpha1.TargetCluster{tc("a", "")},
			works: map[string]workState{"a": {exists: true}},
			want:  []workv1alpha1.TargetCluster{tc("a", "")}},
		{name: "scheduled with applied work is bound", targets: []workv1alpha1.TargetCluster{tc("a", ""), tc("b", sched)},
			works: map[string]workState{"a": applied, "b": applied},
			want:  []workv1alpha1.TargetCluster{tc("a", bound), tc("b", bound)}, changed: true},
		{name: "picked again while its work is being deleted", targets: []workv1alpha1.TargetCluster{tc("a", sched)},
			works: map[string]workState{"a": {exists: true, deleting: true, applied: true}},
			want:  []workv1alpha1.TargetCluster{tc("a", sched)}},
		{name: "bound stays bound", targets: []workv1alpha1.TargetCluster{tc("a", bound)},
			works: map[string]workState{"a": {exists: true, failed: true}},
			want:  []workv1alpha1.TargetCluster{tc("a", bound)}},
		{name: "unscheduled waits for its work", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", unsch)},
			works: map[string]workState{"a": applied, "b": {exists: true, deleting: true}},
			want:  []workv1alpha1.TargetCluster{tc("a", bound), tc("b", unsch)}},
		{name: "unscheduled goes with its work", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", unsch)},
			works: map[string]workState{"a": applied},
			want:  []workv1alpha1.TargetCluster{tc("a", bound)}, changed: true},
	}
	for _, tt := range tests {
		got, changed := nextTargets(tt.targets, tt.works)
		if !reflect.DeepEqual(got, tt.want) || changed != tt.changed {
			t.Errorf("%s: nextTargets = %v, %v; want %v, %v", tt.name, got, changed, tt.want, tt.changed)
		}
	}
}

func TestFullyApplied(t *testing.T) {
	applied := workState{exists: true, applied: true}
	tests := []struct {
		name    string
		targets []workv1alpha1.TargetCluster
		works   map[string]workState
		status  metav1.ConditionStatus
		reason  string
		mention []string
	}{
		{name: "no active targets", targets: []workv1alpha1.TargetCluster{tc("c", unsch)}},
		{name: "all applied, unscheduled ignored", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", sched), tc("c", unsch)},
			works: map[string]workState{"a": applied, "b": applied}, status: metav1.ConditionTrue, reason: ReasonFullyAppliedSuccess},
		{name: "waiting", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", sched)},
			works: map[string]workState{"a": applied}, status: metav1.ConditionFalse, reason: ReasonPending, mention: []string{"b"}},
		{name: "failed", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", bound), tc("c", sched)},
			works:  map[string]workState{"a": {exists: true, failed: true, message: "quota exceeded"}, "b": applied},
			status: metav1.ConditionFalse, reason: ReasonFullyAppliedFailed, mention: []string{"a (quota exceeded)", "Waiting for c"}},
		{name: "suspended", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", sched), tc("c", sched)},
			works:  map[string]workState{"a": applied, "b": {exists: true, suspended: true}},
			status: metav1.ConditionFalse, reason: ReasonSuspended, mention: []string{"suspended on 1 of 3 clusters", ": b.", "Waiting for c"}},
		{name: "suspended after it was applied counts as applied", targets: []workv1alpha1.TargetCluster{tc("a", bound)},
			works:  map[string]workState{"a": {exists: true, applied: true, suspended: true}},
			status: metav1.ConditionTrue, reason: ReasonFullyAppliedSuccess},
		{name: "a failure outranks suspension", targets: []workv1alpha1.TargetCluster{tc("a", bound), tc("b", sched)},
			works:  map[string]workState{"a": {exists: true, failed: true, message: "conflict: x"}, "b": {exists: true, suspended: true}},
			status: metav1.ConditionFalse, reason: ReasonFullyAppliedFailed, mention: []string{"a (conflict: x)"}},
	}
	for _, tt := range tests {
		c, ok := fullyApplied(tt.targets, tt.works)
		if ok != (tt.reason != "") {
			t.Errorf("%s: FullyApplied gives a condition: %v", tt.name, ok)
			continue
		}
		if !ok {
			continue
		}
		if c.Type != workv1alpha1.ConditionFullyApplied || c.Status != tt.status || c.Reason != tt.reason {
			t.Errorf("%s: fullyApplied = %s/%s (%s), want %s/%s", tt.name, c.Status, c.Reason, c.Message, tt.status, tt.reason)
		}
		for _, m := range tt.mention {
			if !strings.Contains(c.Message, m) {
				t.Errorf("%s: message %q does not mention %q", tt.name, c.Message, m)
			}
		}
	}
}

func TestListedIsBounded(t *testing.T) {
	items := make([]string, 25)
	for i := range items {
		items[i] = "c"
	}
	if got := listed(items, ", "); !strings.HasSuffix(got, "and 15 more") {
		t.Errorf("listed = %q", got)
	}
}
