// Package podsample converts between a member's pods, metrics.k8s.io
// PodMetrics and custom.metrics.k8s.io values and the compact sample of
// them (workv1alpha1.PodMetricsSample) the agent of a Pull cluster reports
// in a Work's status: the agent builds it with New, the hub's
// FederatedHPA controller reads it back with Pods, PodMetrics and
// CustomMetric, keeping exactly what its rules read of a pod (phase,
// readiness and its time, start time, deletion, cpu and memory requests
// and usage per container, the sample's timestamp and window) and of a
// custom metric (each pod's value, or the object's, and the newest
// time). ReadPodMetrics and ReadCustomMetric read a member's APIs, for
// the agent and for the hub's reads of Push members alike.
package podsample

import (
	"fmt"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// maxError bounds the sample's error, as the API does.
const maxError = 512

// Input is what the agent read in its member for one workload.
type Input struct {
	// Selector is the workload's pod selector, as a string.
	Selector string
	Pods     []corev1.Pod
	// PodMetrics of those pods; MetricsErr says why they could not be read.
	PodMetrics []metricsv1beta1.PodMetrics
	MetricsErr error
	// Autoscalers are the member's autoscalers of the workload's
	// namespace; those naming Target are reported.
	Autoscalers []autoscalingv2.HorizontalPodAutoscaler
	// Target is the workload (apiVersion, kind, name).
	Target autoscalingv2.CrossVersionObjectReference
	// CustomMetrics are the custom.metrics.k8s.io metrics the Work asks
	// for, as read.
	CustomMetrics []CustomInput
	// Now stamps the sample.
	Now time.Time
}

// New builds the sample of in: pods sorted by name, at most
// workv1alpha1.MaxPodMetricsPods of them (the error says when more ran).
func New(in Input) *workv1alpha1.PodMetricsSample {
	s := &workv1alpha1.PodMetricsSample{SampleTime: metav1.Time{Time: in.Now}, Selector: in.Selector}
	byName := make(map[string]*metricsv1beta1.PodMetrics, len(in.PodMetrics))
	for i := range in.PodMetrics {
		byName[in.PodMetrics[i].Name] = &in.PodMetrics[i]
	}
	pods := slices.Clone(in.Pods)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var errs []string
	if in.MetricsErr != nil {
		errs = append(errs, "metrics.k8s.io not readable: "+in.MetricsErr.Error())
	}
	truncated := ""
	if len(pods) > workv1alpha1.MaxPodMetricsPods {
		truncated = fmt.Sprintf("%d pods, only the first %d reported", len(pods), workv1alpha1.MaxPodMetricsPods)
		errs = append(errs, truncated)
		pods = pods[:workv1alpha1.MaxPodMetricsPods]
	}
	s.Error = truncate(strings.Join(errs, "; "), maxError)
	sampled := make(map[string]bool, len(pods))
	for i := range pods {
		s.Pods = append(s.Pods, podSample(&pods[i], byName[pods[i].Name]))
		sampled[pods[i].Name] = true
	}
	for i, c := range in.CustomMetrics {
		if i == workv1alpha1.MaxCustomMetrics {
			break
		}
		s.CustomMetrics = append(s.CustomMetrics, customSample(c, sampled, truncated))
	}
	for _, h := range in.Autoscalers {
		if SameTarget(h.Spec.ScaleTargetRef, in.Target) && len(s.Autoscalers) < 16 {
			s.Autoscalers = append(s.Autoscalers, h.Name)
		}
	}
	slices.Sort(s.Autoscalers)
	return s
}

// podSample is one pod and its metrics (pm nil: none).
func podSample(p *corev1.Pod, pm *metricsv1beta1.PodMetrics) workv1alpha1.PodSample {
	ps := workv1alpha1.PodSample{Name: p.Name, Phase: p.Status.Phase, Deleting: p.DeletionTimestamp != nil, StartTime: p.Status.StartTime}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			t := c.LastTransitionTime
			ps.Ready, ps.ReadyTime = c.Status == corev1.ConditionTrue, &t
		}
	}
	usage := map[string]corev1.ResourceList{}
	if pm != nil {
		ts, w := pm.Timestamp, pm.Window
		ps.Timestamp, ps.Window = &ts, &w
		for _, c := range pm.Containers {
			usage[c.Name] = c.Usage
		}
	}
	for _, c := range p.Spec.Containers {
		cs := workv1alpha1.ContainerSample{Name: c.Name,
			CPURequest: quantity(c.Resources.Requests, corev1.ResourceCPU), MemoryRequest: quantity(c.Resources.Requests, corev1.ResourceMemory)}
		if u, ok := usage[c.Name]; ok {
			cs.CPUUsage, cs.MemoryUsage = quantity(u, corev1.ResourceCPU), quantity(u, corev1.ResourceMemory)
		}
		ps.Containers = append(ps.Containers, cs)
	}
	return ps
}

// Pods are the sample's pods as the FederatedHPA reads pods: name, phase,
// Ready condition, start time, deletion and the containers' cpu and
// memory requests.
func Pods(s *workv1alpha1.PodMetricsSample) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(s.Pods))
	for _, ps := range s.Pods {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: ps.Name}, Status: corev1.PodStatus{Phase: ps.Phase, StartTime: ps.StartTime}}
		if ps.Deleting {
			p.DeletionTimestamp = &s.SampleTime
		}
		if ps.ReadyTime != nil {
			st := corev1.ConditionFalse
			if ps.Ready {
				st = corev1.ConditionTrue
			}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: *ps.ReadyTime}}
		}
		for _, cs := range ps.Containers {
			req := corev1.ResourceList{}
			set(req, corev1.ResourceCPU, cs.CPURequest)
			set(req, corev1.ResourceMemory, cs.MemoryRequest)
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: cs.Name, Resources: corev1.ResourceRequirements{Requests: req}})
		}
		out = append(out, p)
	}
	return out
}

// PodMetrics are the sample's metrics.k8s.io PodMetrics: one per pod
// that had a sample, with its timestamp, window and containers' usage.
func PodMetrics(s *workv1alpha1.PodMetricsSample) []metricsv1beta1.PodMetrics {
	var out []metricsv1beta1.PodMetrics
	for _, ps := range s.Pods {
		if ps.Timestamp == nil {
			continue
		}
		pm := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: ps.Name}, Timestamp: *ps.Timestamp}
		if ps.Window != nil {
			pm.Window = *ps.Window
		}
		for _, cs := range ps.Containers {
			u := corev1.ResourceList{}
			set(u, corev1.ResourceCPU, cs.CPUUsage)
			set(u, corev1.ResourceMemory, cs.MemoryUsage)
			if len(u) > 0 {
				pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: cs.Name, Usage: u})
			}
		}
		out = append(out, pm)
	}
	return out
}

// SameTarget says whether an autoscaler's reference names the workload
// ref names: same group, kind and name (any version).
func SameTarget(a, b autoscalingv2.CrossVersionObjectReference) bool {
	ga, _ := schema.ParseGroupVersion(a.APIVersion)
	gb, _ := schema.ParseGroupVersion(b.APIVersion)
	return ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

func quantity(l corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	q, ok := l[name]
	if !ok {
		return nil
	}
	return &q
}

func set(l corev1.ResourceList, name corev1.ResourceName, q *resource.Quantity) {
	if q != nil {
		l[name] = *q
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
