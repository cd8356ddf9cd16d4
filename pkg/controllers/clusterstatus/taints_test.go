package clusterstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

func TestDesiredTaints(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cond := func(s metav1.ConditionStatus, ago time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: "Ready", Status: s, LastTransitionTime: metav1.NewTime(now.Add(-ago))}
	}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Effect: effect}
	}
	const (
		notReady    = clusterv1alpha1.TaintClusterNotReady
		unreachable = clusterv1alpha1.TaintClusterUnreachable
		noSched     = corev1.TaintEffectNoSchedule
		noExec      = corev1.TaintEffectNoExecute
	)
	user := taint("dedicated", noSched)
	grace := []taintRule{{effect: noSched, after: 40 * time.Second}}
	// The failover issue adds a NoExecute rule; the mechanism handles it.
	withEviction := []taintRule{{effect: noSched, after: 40 * time.Second}, {effect: noExec, after: 5 * time.Minute}}

	cases := []struct {
		name           string
		current        []corev1.Taint
		ready          *metav1.Condition
		rules          []taintRule
		want           []string // key:effect, in order
		added, removed int
		recheck        time.Duration
	}{
		{name: "never probed", current: []corev1.Taint{user}, rules: grace, want: []string{"dedicated:NoSchedule"}},
		{name: "ready", current: []corev1.Taint{user}, ready: cond("True", time.Hour), rules: grace, want: []string{"dedicated:NoSchedule"}},
		{name: "not ready within grace", ready: cond("False", 10*time.Second), rules: grace, recheck: 30 * time.Second},
		{name: "not ready past grace", current: []corev1.Taint{user}, ready: cond("False", 40*time.Second), rules: grace,
			want: []string{"dedicated:NoSchedule", notReady + ":NoSchedule"}, added: 1},
		{name: "unreachable past grace", ready: cond("Unknown", time.Minute), rules: grace, want: []string{unreachable + ":NoSchedule"}, added: 1},
		{name: "already tainted: unchanged", current: []corev1.Taint{taint(unreachable, noSched), user}, ready: cond("Unknown", time.Hour), rules: grace,
			want: []string{"dedicated:NoSchedule", unreachable + ":NoSchedule"}},
		{name: "recovered: taint removed, user taint kept", current: []corev1.Taint{user, taint(notReady, noSched)}, ready: cond("True", time.Second), rules: grace,
			want: []string{"dedicated:NoSchedule"}, removed: 1},
		{name: "not ready then unreachable switches at once", current: []corev1.Taint{taint(notReady, noSched)}, ready: cond("Unknown", time.Second), rules: grace,
			want: []string{unreachable + ":NoSchedule"}, added: 1, removed: 1},
		{name: "eviction rule waits longer", ready: cond("Unknown", time.Minute), rules: withEviction,
			want: []string{unreachable + ":NoSchedule"}, added: 1, recheck: 4 * time.Minute},
		{name: "eviction rule due", current: []corev1.Taint{taint(unreachable, noSched)}, ready: cond("Unknown", 5*time.Minute), rules: withEviction,
			want: []string{unreachable + ":NoSchedule", unreachable + ":NoExecute"}, added: 1},
		{name: "recovery removes both", current: []corev1.Taint{taint(unreachable, noSched), taint(unreachable, noExec)}, ready: cond("True", 0), rules: withEviction,
			removed: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var since time.Time
			if tc.ready != nil {
				since = tc.ready.LastTransitionTime.Time
			}
			ch := desiredTaints(tc.current, tc.ready, since, now, tc.rules)
			var got []string
			for _, t := range ch.taints {
				got = append(got, t.Key+":"+string(t.Effect))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("taints = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("taints = %v, want %v", got, tc.want)
				}
			}
			if len(ch.added) != tc.added || len(ch.removed) != tc.removed || ch.recheck != tc.recheck {
				t.Errorf("added %d removed %d recheck %s, want %d %d %s", len(ch.added), len(ch.removed), ch.recheck, tc.added, tc.removed, tc.recheck)
			}
			for _, a := range ch.added {
				if a.TimeAdded == nil || !a.TimeAdded.Time.Equal(now) {
					t.Errorf("added taint %s without TimeAdded=now", a.Key)
				}
			}
		})
	}
}
