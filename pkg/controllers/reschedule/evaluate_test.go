package reschedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestEvaluate(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC))
	before, after := metav1.NewTime(at.Add(-time.Second)), metav1.NewTime(at.Add(time.Second))
	binding := func(stamp, last *metav1.Time, status metav1.ConditionStatus, observedGen int64) *workv1alpha1.ResourceBinding {
		b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment", Generation: 5}}
		b.Spec.RescheduleTriggeredAt = stamp
		b.Status.LastScheduledTime = last
		if status != "" {
			b.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: status, Reason: "Unschedulable", Message: "0/3 clusters available", ObservedGeneration: observedGen}}
		}
		return b
	}
	served := binding(&at, &at, metav1.ConditionTrue, 5)
	served.Annotations = map[string]string{workv1alpha1.AnnotationRescheduleObserved: at.UTC().Format(time.RFC3339)}
	gone := binding(&at, &after, metav1.ConditionTrue, 5)
	gone.DeletionTimestamp = &after
	tests := []struct {
		name   string
		b      workv1alpha1.BindingObject
		want   taskv1alpha1.TargetPhase
		reason string
	}{
		{name: "no binding", b: nil, want: taskv1alpha1.TargetFailed, reason: "no longer exists"},
		{name: "being deleted", b: gone, want: taskv1alpha1.TargetFailed, reason: "being deleted"},
		{name: "not stamped", b: binding(nil, &before, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetPending},
		{name: "stamped earlier", b: binding(&before, &after, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetPending},
		{name: "stamped, not served", b: binding(&at, &before, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetPending},
		{name: "stamped in the second of the last scheduling", b: binding(&at, &at, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetPending},
		{name: "served in the same second", b: served, want: taskv1alpha1.TargetSuccessful},
		{name: "served later", b: binding(&at, &after, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetSuccessful},
		{name: "a later stamp served", b: binding(&after, &after, metav1.ConditionTrue, 5), want: taskv1alpha1.TargetSuccessful},
		{name: "unschedulable before the stamp was seen", b: binding(&at, &before, metav1.ConditionFalse, 4), want: taskv1alpha1.TargetPending},
		{name: "unschedulable with the stamp", b: binding(&at, &before, metav1.ConditionFalse, 5), want: taskv1alpha1.TargetFailed, reason: "scheduling failed (Unschedulable): 0/3 clusters available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phase, reason := evaluate(tt.b, "ns/web-deployment", at)
			if phase != tt.want || !strings.Contains(reason, tt.reason) || (tt.reason == "") != (reason == "") {
				t.Fatalf("evaluate = %s %q, want %s %q", phase, reason, tt.want, tt.reason)
			}
		})
	}
}

func TestBindingKeys(t *testing.T) {
	for key, kind := range map[string]string{"ns/web-deployment": "*v1alpha1.ResourceBinding", "reader-clusterrole": "*v1alpha1.ClusterResourceBinding"} {
		b := parseBindingKey(key)
		if got := bindingKey(b.GetNamespace(), b.GetName()); got != key {
			t.Errorf("round trip of %q gives %q", key, got)
		}
		if got := fmt.Sprintf("%T", b); got != kind {
			t.Errorf("%q parses to a %s, want %s", key, got, kind)
		}
	}
}
