package federatedhpa

import (
	"errors"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// k8sPod is a pod requesting 100m CPU in phase, Ready or not.
func k8sPod(name string, phase corev1.PodPhase, ready bool) corev1.Pod {
	started := metav1.NewTime(t0.Add(-time.Hour))
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		Status: corev1.PodStatus{Phase: phase, StartTime: &started,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: started}}}}
}

// podMetrics is a sample of name using milliCPU, taken at sampled.
func podMetrics(name string, milliCPU int64, sampled time.Time) metricsv1beta1.PodMetrics {
	return metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.NewTime(sampled),
		Window: metav1.Duration{Duration: 15 * time.Second},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}}}}
}

// TestSamples: when a member is left out, and how its pods count. A
// metrics API reports running and Ready pods only, so a member whose pods
// are all starting is measured (its pods unready), not left out.
func TestSamples(t *testing.T) {
	deleting := k8sPod("old", corev1.PodRunning, true)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	for _, tc := range []struct {
		name     string
		pods     []corev1.Pod
		pms      []metricsv1beta1.PodMetrics
		err      error
		excluded string // a substring; empty: measured
		pending  int
	}{
		{name: "ready pods with fresh samples",
			pods: []corev1.Pod{k8sPod("a", corev1.PodRunning, true)}, pms: []metricsv1beta1.PodMetrics{podMetrics("a", 50, t0)}},
		{name: "every pod Pending: measured, pods unready",
			pods: []corev1.Pod{k8sPod("a", corev1.PodPending, false), k8sPod("b", corev1.PodPending, false)}, pending: 2},
		{name: "every pod running, not Ready yet: measured",
			pods: []corev1.Pod{k8sPod("a", corev1.PodRunning, false)}},
		{name: "only a deleting pod: measured",
			pods: []corev1.Pod{deleting}},
		{name: "no pods: measured"},
		{name: "a ready pod without samples: left out",
			pods: []corev1.Pod{k8sPod("a", corev1.PodRunning, true), k8sPod("b", corev1.PodPending, false)}, pending: 1,
			excluded: "no metrics.k8s.io samples for its running pods"},
		{name: "stale samples: left out",
			pods: []corev1.Pod{k8sPod("a", corev1.PodRunning, true)}, pms: []metricsv1beta1.PodMetrics{podMetrics("a", 50, t0.Add(-5*time.Minute))},
			excluded: "metrics stale: the newest sample is 5m0s old"},
		{name: "not readable: left out",
			pods: []corev1.Pod{k8sPod("a", corev1.PodPending, false)}, err: errors.New("the server is currently unable to handle the request"), pending: 1,
			excluded: "metrics not readable: the server is currently unable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, excluded := samples([]autoscalingv2.MetricSpec{cpuUtil(50)}, tc.pods, tc.pms, tc.err, t0, 2*time.Minute)
			if (tc.excluded == "") != (excluded == "") || !strings.Contains(excluded, tc.excluded) {
				t.Errorf("excluded %q, want %q", excluded, tc.excluded)
			}
			pending := 0
			for _, q := range got {
				if q.pending {
					pending++
				}
			}
			if len(got) != len(tc.pods) || pending != tc.pending {
				t.Errorf("%d pods, %d pending; want %d and %d", len(got), pending, len(tc.pods), tc.pending)
			}
		})
	}
}
