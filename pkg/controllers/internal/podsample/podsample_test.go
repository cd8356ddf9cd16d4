package podsample

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var (
	t0     = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	target = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
)

// pod is a pod of containers named c0, c1... requesting cpu (milli) and
// 64Mi each; ready says whether it is Ready (since t0-1m).
func pod(name string, phase corev1.PodPhase, ready bool, cpu ...int64) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: t0.Add(-10 * time.Minute)}}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Time{Time: t0.Add(-time.Minute)}}}
	for i, m := range cpu {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(m, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse("64Mi")}}})
	}
	return p
}

// metrics is a PodMetrics sampled at t0-15s using cpu (milli) per container.
func metrics(name string, cpu ...int64) metricsv1beta1.PodMetrics {
	pm := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.Time{Time: t0.Add(-15 * time.Second)}, Window: metav1.Duration{Duration: 30 * time.Second}}
	for i, m := range cpu {
		pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: fmt.Sprintf("c%d", i), Usage: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(m, resource.DecimalSI), corev1.ResourceMemory: resource.MustParse("32Mi")}})
	}
	return pm
}

func hpa(name, kind, target string) autoscalingv2.HorizontalPodAutoscaler {
	return autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: target}}}
}

// TestRoundTrip: what the hub reads back from the sample is what the
// FederatedHPA reads of the member's own pods and PodMetrics.
func TestRoundTrip(t *testing.T) {
	deleting := pod("c-deleting", corev1.PodRunning, true, 100)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	noRequest := pod("d-no-request", corev1.PodRunning, true, 100)
	noRequest.Spec.Containers[0].Resources.Requests = nil
	cases := []struct {
		name       string
		pods       []corev1.Pod
		pms        []metricsv1beta1.PodMetrics
		wantPods   []string // sorted
		wantPMs    []string
		wantErrHas string
	}{
		{name: "ready pods with metrics, two containers",
			pods:     []corev1.Pod{pod("b", corev1.PodRunning, true, 100, 50), pod("a", corev1.PodRunning, true, 200)},
			pms:      []metricsv1beta1.PodMetrics{metrics("a", 150), metrics("b", 80, 20)},
			wantPods: []string{"a", "b"}, wantPMs: []string{"a", "b"}},
		{name: "pending and unready pods have no metrics",
			pods:     []corev1.Pod{pod("a", corev1.PodRunning, true, 100), pod("b", corev1.PodPending, false, 100), pod("e", corev1.PodRunning, false, 100)},
			pms:      []metricsv1beta1.PodMetrics{metrics("a", 90)},
			wantPods: []string{"a", "b", "e"}, wantPMs: []string{"a"}},
		{name: "a deleting pod and one without request",
			pods:     []corev1.Pod{deleting, noRequest},
			pms:      []metricsv1beta1.PodMetrics{metrics("c-deleting", 10), metrics("d-no-request", 10)},
			wantPods: []string{"c-deleting", "d-no-request"}, wantPMs: []string{"c-deleting", "d-no-request"}},
		{name: "no pods", wantPods: []string{}, wantPMs: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Input{Selector: "app=web", Pods: tc.pods, PodMetrics: tc.pms, Target: target, Now: t0})
			if s.Error != "" || s.Selector != "app=web" || !s.SampleTime.Time.Equal(t0) {
				t.Fatalf("sample %+v", s)
			}
			pods, pms := Pods(s), PodMetrics(s)
			if got := podNames(pods); fmt.Sprint(got) != fmt.Sprint(tc.wantPods) {
				t.Fatalf("pods %v, want %v", got, tc.wantPods)
			}
			if got := metricNames(pms); fmt.Sprint(got) != fmt.Sprint(tc.wantPMs) {
				t.Fatalf("metrics %v, want %v", got, tc.wantPMs)
			}
			orig := map[string]corev1.Pod{}
			for _, p := range tc.pods {
				orig[p.Name] = p
			}
			for _, p := range pods {
				o := orig[p.Name]
				if p.Status.Phase != o.Status.Phase || !p.Status.StartTime.Equal(o.Status.StartTime) || (p.DeletionTimestamp != nil) != (o.DeletionTimestamp != nil) {
					t.Errorf("pod %s: phase %s start %v deleting %v, want %s %v %v", p.Name, p.Status.Phase, p.Status.StartTime, p.DeletionTimestamp != nil, o.Status.Phase, o.Status.StartTime, o.DeletionTimestamp != nil)
				}
				if ready(p) != ready(o) {
					t.Errorf("pod %s: Ready %+v, want %+v", p.Name, ready(p), ready(o))
				}
				for i, c := range p.Spec.Containers {
					if !equality.Semantic.DeepEqual(c.Resources.Requests, o.Spec.Containers[i].Resources.Requests) && len(o.Spec.Containers[i].Resources.Requests) > 0 {
						t.Errorf("pod %s container %s: requests %v, want %v", p.Name, c.Name, c.Resources.Requests, o.Spec.Containers[i].Resources.Requests)
					}
				}
			}
			origPM := map[string]metricsv1beta1.PodMetrics{}
			for _, pm := range tc.pms {
				origPM[pm.Name] = pm
			}
			for _, pm := range pms {
				o := origPM[pm.Name]
				if !pm.Timestamp.Equal(&o.Timestamp) || pm.Window != o.Window || !equality.Semantic.DeepEqual(pm.Containers, o.Containers) {
					t.Errorf("metrics of %s: %+v, want %+v", pm.Name, pm, o)
				}
			}
		})
	}
}

// TestNewReports: the sample says why it is incomplete, bounds its pods,
// and names only the member autoscalers of the workload.
func TestNewReports(t *testing.T) {
	many := make([]corev1.Pod, workv1alpha1.MaxPodMetricsPods+2)
	for i := range many {
		many[i] = pod(fmt.Sprintf("p%04d", i), corev1.PodRunning, true, 100)
	}
	cases := []struct {
		name      string
		in        Input
		wantErr   string
		wantPods  int
		wantFirst string
		wantHPAs  []string
	}{
		{name: "metrics API down", in: Input{Pods: many[:1], MetricsErr: errors.New("the server is currently unable to handle the request")},
			wantErr: "metrics.k8s.io not readable: the server is currently unable", wantPods: 1, wantFirst: "p0000"},
		{name: "more pods than the bound", in: Input{Pods: many},
			wantErr: fmt.Sprintf("%d pods, only the first %d reported", len(many), workv1alpha1.MaxPodMetricsPods), wantPods: workv1alpha1.MaxPodMetricsPods, wantFirst: "p0000"},
		{name: "the member's autoscalers of the workload", in: Input{Autoscalers: []autoscalingv2.HorizontalPodAutoscaler{
			hpa("z", "Deployment", "web"), hpa("other", "Deployment", "api"), hpa("sts", "StatefulSet", "web"), hpa("a", "Deployment", "web")}},
			wantHPAs: []string{"a", "z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Target, tc.in.Now = target, t0
			s := New(tc.in)
			if !strings.Contains(s.Error, tc.wantErr) || (tc.wantErr == "") != (s.Error == "") {
				t.Errorf("error %q, want %q", s.Error, tc.wantErr)
			}
			if len(s.Pods) != tc.wantPods || (tc.wantPods > 0 && s.Pods[0].Name != tc.wantFirst) {
				t.Errorf("%d pods, want %d from %s", len(s.Pods), tc.wantPods, tc.wantFirst)
			}
			if fmt.Sprint(s.Autoscalers) != fmt.Sprint(tc.wantHPAs) && !(len(s.Autoscalers) == 0 && len(tc.wantHPAs) == 0) {
				t.Errorf("autoscalers %v, want %v", s.Autoscalers, tc.wantHPAs)
			}
		})
	}
}

func ready(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return fmt.Sprintf("%s@%s", c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

func podNames(pods []corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func metricNames(pms []metricsv1beta1.PodMetrics) []string {
	out := []string{}
	for _, pm := range pms {
		out = append(out, pm.Name)
	}
	return out
}
