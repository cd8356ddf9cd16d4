package federatedhpa

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
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

// value is a custom metric's value q of a pod (or an object), at sampled.
func value(name, q string, sampled time.Time) custommetricsv1beta2.MetricValue {
	return custommetricsv1beta2.MetricValue{DescribedObject: corev1.ObjectReference{Name: name}, Timestamp: metav1.NewTime(sampled), Value: resource.MustParse(q)}
}

// TestSamples: when a member is left out of a metric, and how its pods
// count. A metrics API reports running and Ready pods only, so a member
// whose pods are all starting is measured (its pods unready), not left
// out. Each metric is judged on what it reads: a member whose
// metrics.k8s.io is down still counts for a Pods metric it serves.
func TestSamples(t *testing.T) {
	deleting := k8sPod("old", corev1.PodRunning, true)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	ready := []corev1.Pod{k8sPod("a", corev1.PodRunning, true), k8sPod("b", corev1.PodRunning, true)}
	starting := []corev1.Pod{k8sPod("a", corev1.PodPending, false), k8sPod("b", corev1.PodRunning, false)}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "custom.metrics.k8s.io", Resource: "pods"}, "rps")
	cpu := []autoscalingv2.MetricSpec{cpuUtil(50)}
	rps := []autoscalingv2.MetricSpec{podsAvg("rps", "10")}
	ingress := []autoscalingv2.MetricSpec{objectValue("200")}
	custom := func(vs ...custommetricsv1beta2.MetricValue) [][]custommetricsv1beta2.MetricValue {
		return [][]custommetricsv1beta2.MetricValue{vs}
	}
	for _, tc := range []struct {
		name    string
		metrics []autoscalingv2.MetricSpec
		in      reading
		// leftOut per metric: a substring; empty: measured.
		leftOut []string
		pending int
		// usage of metric 0 per pod (-1: no value), when checked.
		usage []int64
		// object value of metric 0, when read.
		object int64
	}{
		{name: "ready pods with fresh samples", metrics: cpu,
			in: reading{pods: ready[:1], podMetrics: []metricsv1beta1.PodMetrics{podMetrics("a", 50, t0)}}, leftOut: []string{""}, usage: []int64{50}},
		{name: "every pod Pending: measured, pods unready", metrics: cpu,
			in: reading{pods: []corev1.Pod{k8sPod("a", corev1.PodPending, false), k8sPod("b", corev1.PodPending, false)}}, leftOut: []string{""}, pending: 2},
		{name: "every pod running, not Ready yet: measured", metrics: cpu,
			in: reading{pods: []corev1.Pod{k8sPod("a", corev1.PodRunning, false)}}, leftOut: []string{""}},
		{name: "only a deleting pod: measured", metrics: cpu, in: reading{pods: []corev1.Pod{deleting}}, leftOut: []string{""}},
		{name: "no pods: measured", metrics: cpu, leftOut: []string{""}},
		{name: "a ready pod without samples: left out", metrics: cpu,
			in: reading{pods: []corev1.Pod{ready[0], k8sPod("p", corev1.PodPending, false)}}, pending: 1,
			leftOut: []string{"no metrics.k8s.io samples for its running pods"}},
		{name: "stale samples: left out", metrics: cpu,
			in:      reading{pods: ready[:1], podMetrics: []metricsv1beta1.PodMetrics{podMetrics("a", 50, t0.Add(-5*time.Minute))}},
			leftOut: []string{"metrics stale: the newest sample is 5m0s old"}},
		{name: "not readable: left out", metrics: cpu,
			in: reading{pods: []corev1.Pod{k8sPod("a", corev1.PodPending, false)}, podMetricsErr: errors.New("the server is currently unable to handle the request")}, pending: 1,
			leftOut: []string{"metrics not readable: the server is currently unable"}},

		{name: "pods metric: each pod's value, a pod without one missing", metrics: rps,
			in:      reading{pods: append(ready, k8sPod("c", corev1.PodRunning, true)), custom: custom(value("a", "1500m", t0), value("b", "3", t0)), customErr: []error{nil}},
			leftOut: []string{""}, usage: []int64{1500, 3000, -1}},
		{name: "pods metric: metrics.k8s.io down does not matter", metrics: rps,
			in:      reading{pods: ready, podMetricsErr: errors.New("no metrics-server"), custom: custom(value("a", "1", t0), value("b", "1", t0)), customErr: []error{nil}},
			leftOut: []string{""}, usage: []int64{1000, 1000}},
		{name: "pods metric not served: left out", metrics: rps,
			in: reading{pods: ready, custom: custom(), customErr: []error{notFound}}, leftOut: []string{"pods metric rps not readable: "}},
		{name: "pods metric not served while every pod starts: measured", metrics: rps,
			in: reading{pods: starting, custom: custom(), customErr: []error{notFound}}, leftOut: []string{""}, pending: 1},
		{name: "pods metric without values for the running pods: left out", metrics: rps,
			in: reading{pods: ready, custom: custom(), customErr: []error{nil}}, leftOut: []string{"no values of pods metric rps for its running pods"}},
		{name: "pods metric stale: left out", metrics: rps,
			in:      reading{pods: ready, custom: custom(value("a", "1", t0.Add(-5*time.Minute))), customErr: []error{nil}},
			leftOut: []string{"pods metric rps stale: the newest value is 5m0s old"}},
		{name: "pods metric with a selector that does not parse: the metric's error, no member's", metrics: []autoscalingv2.MetricSpec{badSelector(podsAvg("rps", "10"))},
			in: reading{pods: ready, custom: custom(), customErr: []error{nil}}, leftOut: []string{""}},

		{name: "object metric: its value", metrics: ingress,
			in: reading{pods: ready, custom: custom(value("web", "150", t0)), customErr: []error{nil}}, leftOut: []string{""}, object: 150000},
		{name: "object metric not served: left out", metrics: ingress,
			in: reading{pods: starting, custom: custom(), customErr: []error{notFound}}, pending: 1,
			leftOut: []string{"object metric rps of Ingress web not readable: "}},
		{name: "object metric without a value: left out", metrics: ingress,
			in: reading{pods: ready, custom: custom(), customErr: []error{nil}}, leftOut: []string{"no value of object metric rps of Ingress web"}},
		{name: "object metric stale: left out", metrics: ingress,
			in:      reading{pods: ready, custom: custom(value("web", "1", t0.Add(-3*time.Minute))), customErr: []error{nil}},
			leftOut: []string{"object metric rps of Ingress web stale: the newest value is 3m0s old"}},

		{name: "cpu stale, a pods metric fresh: left out of cpu alone", metrics: append(cpu, rps...),
			in: reading{pods: ready[:1], podMetrics: []metricsv1beta1.PodMetrics{podMetrics("a", 50, t0.Add(-5*time.Minute))},
				custom: [][]custommetricsv1beta2.MetricValue{nil, {value("a", "2", t0)}}, customErr: []error{nil, nil}},
			leftOut: []string{"metrics stale", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := samples(tc.metrics, tc.in, t0, 2*time.Minute)
			for i, want := range tc.leftOut {
				if got := c.out(i); (want == "") != (got == "") || !strings.Contains(got, want) {
					t.Errorf("metric %d: left out %q, want %q", i, got, want)
				}
			}
			pending := 0
			for _, q := range c.pods {
				if q.pending {
					pending++
				}
			}
			if len(c.pods) != len(tc.in.pods) || pending != tc.pending {
				t.Errorf("%d pods, %d pending; want %d and %d", len(c.pods), pending, len(tc.in.pods), tc.pending)
			}
			for i, want := range tc.usage {
				if got := c.pods[i]; (want < 0) == got.hasUsage[0] || (want >= 0 && got.usage[0] != want) {
					t.Errorf("pod %s: usage %d (sampled %v), want %d", got.name, got.usage[0], got.hasUsage[0], want)
				}
			}
			if v, ok := c.objectValue(0); ok != (tc.object != 0) || v != tc.object {
				t.Errorf("object value %d (read %v), want %d", v, ok, tc.object)
			}
		})
	}
}

// TestCustomRequests: what a FederatedHPA asks members' custom metrics
// APIs for, once per metric, in the spec's order; a metric whose selector
// does not parse is asked for nowhere.
func TestCustomRequests(t *testing.T) {
	sel := podsAvg("rps", "10")
	sel.Pods.Metric.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"verb": "GET"}}
	got := customRequests([]autoscalingv2.MetricSpec{cpuUtil(50), podsAvg("rps", "10"), objectValue("200"), sel, podsAvg("rps", "20"),
		badSelector(podsAvg("latency", "1")), {Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"}}}})
	var names []string
	for _, r := range got {
		names = append(names, r.String())
	}
	if want := []string{"pods metric rps", "object metric rps of Ingress web", "pods metric rps {verb=GET}"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("requests %q, want %q", names, want)
	}
}
