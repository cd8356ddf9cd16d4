package workstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnschedulable(t *testing.T) {
	t0 := time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)
	pod := func(phase corev1.PodPhase, node string, conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase, Conditions: conds}}
	}
	cond := func(status corev1.ConditionStatus, reason string, at time.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(at)}
	}
	deleting := pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable, t0))
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	for _, tc := range []struct {
		name  string
		pods  []*corev1.Pod
		n     int32
		since time.Time
	}{
		{"none", nil, 0, time.Time{}},
		{"two unschedulable, oldest wins", []*corev1.Pod{
			pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable, t0.Add(time.Minute))),
			pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable, t0)),
		}, 2, t0},
		{"running and scheduled pods are not counted", []*corev1.Pod{
			pod(corev1.PodRunning, "n1", cond(corev1.ConditionTrue, "", t0)),
			pod(corev1.PodPending, "n1", cond(corev1.ConditionTrue, "", t0)),
			pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable, t0.Add(time.Hour))),
		}, 1, t0.Add(time.Hour)},
		{"not yet tried, gated or another reason", []*corev1.Pod{
			pod(corev1.PodPending, ""),
			pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonSchedulingGated, t0)),
			pod(corev1.PodPending, "", cond(corev1.ConditionFalse, "SchedulerError", t0)),
		}, 0, time.Time{}},
		{"being deleted", []*corev1.Pod{deleting}, 0, time.Time{}},
		{"no transition time", []*corev1.Pod{pod(corev1.PodPending, "", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable, time.Time{}))}, 0, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, since := unschedulable(tc.pods)
			if n != tc.n {
				t.Fatalf("n = %d, want %d", n, tc.n)
			}
			if (since == nil) != tc.since.IsZero() || (since != nil && !since.Time.Equal(tc.since)) {
				t.Fatalf("since = %v, want %v", since, tc.since)
			}
		})
	}
}
