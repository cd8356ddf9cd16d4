package simmetrics

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The knob: how busy a simulated pod is, in percent of its containers'
// requests.
const (
	// CPUUtilizationAnnotation on a pod, or on a workload's pod template
	// (which the workload's pods inherit), sets each container's CPU usage
	// to this percent of its CPU request, e.g. "90".
	CPUUtilizationAnnotation = "sim.shepherd.io/cpu-utilization"
	// MemoryUtilizationAnnotation does the same for memory.
	MemoryUtilizationAnnotation = "sim.shepherd.io/memory-utilization"

	// DefaultCPUPercent is the CPU usage of a pod that sets no knob: an
	// idle pod, below any autoscaling target.
	DefaultCPUPercent = 10
	// DefaultMemoryPercent is the memory usage of a pod that sets no knob.
	DefaultMemoryPercent = 50
	// MaxPercent is the largest knob value: ten times the request.
	MaxPercent = 1000

	// OverrideConfigMap, in the member's kube-system namespace, overrides
	// the annotations per workload without a rollout. Each of its keys
	// OverrideCPUKey and OverrideMemoryKey holds a YAML map from
	// "NAMESPACE/WORKLOAD" to a percent.
	OverrideConfigMap = "shepherd-sim-usage"
	OverrideCPUKey    = "cpu-utilization"
	OverrideMemoryKey = "memory-utilization"
)

// ParsePercent reads a knob value: a number of percent from 0 to
// MaxPercent, decimals allowed ("90", "12.5").
func ParsePercent(value string) (float64, error) {
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "%"))
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0, fmt.Errorf("%q is not a number: give a percent of the container requests from 0 to %d, e.g. \"90\"", value, MaxPercent)
	}
	return checkPercent(value, p)
}

func checkPercent(value string, p float64) (float64, error) {
	if p < 0 {
		return 0, fmt.Errorf("%q is negative: give a percent of the container requests from 0 to %d", value, MaxPercent)
	}
	if p > MaxPercent {
		return 0, fmt.Errorf("%q is above %d: give a percent of the container requests from 0 to %d", value, MaxPercent, MaxPercent)
	}
	return p, nil
}

// WorkloadKey is how the override ConfigMap names a pod's workload:
// "NAMESPACE/NAME" of the Deployment behind its ReplicaSet, else of its
// controller (StatefulSet, Job, DaemonSet, ReplicaSet), else of the pod.
func WorkloadKey(pod *corev1.Pod) string {
	name := pod.Name
	if owner := metav1.GetControllerOf(pod); owner != nil {
		name = owner.Name
		hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if owner.Kind == "ReplicaSet" && hash != "" && strings.HasSuffix(owner.Name, "-"+hash) {
			name = strings.TrimSuffix(owner.Name, "-"+hash)
		}
	}
	return pod.Namespace + "/" + name
}

// Overrides are the override ConfigMap's percents by workload key, and
// its custom metrics' values: by workload key for Pods metrics, by
// "NAMESPACE/RESOURCE/NAME" for Object metrics.
type Overrides struct {
	CPU, Memory   map[string]float64
	PodsMetrics   map[string]map[string]resource.Quantity
	ObjectMetrics map[string]map[string]resource.Quantity
}

// ParseOverrides reads the override ConfigMap's data. Entries it cannot
// use are left out and described in problems (sorted), one each, naming
// the key and the fix; the rest still apply.
func ParseOverrides(data map[string]string) (Overrides, []string) {
	var o Overrides
	var problems []string
	o.CPU, problems = parseOverrideKey(data, OverrideCPUKey, problems)
	o.Memory, problems = parseOverrideKey(data, OverrideMemoryKey, problems)
	o.PodsMetrics, problems = parseMetricsKey(data, OverridePodsMetricsKey, workloadEntry, "NAMESPACE/WORKLOAD", problems)
	o.ObjectMetrics, problems = parseMetricsKey(data, OverrideObjectMetricsKey, objectEntry, "NAMESPACE/RESOURCE/NAME", problems)
	for k := range data {
		if k != OverrideCPUKey && k != OverrideMemoryKey && k != OverridePodsMetricsKey && k != OverrideObjectMetricsKey {
			problems = append(problems, fmt.Sprintf("key %q is not used: the keys are %q, %q, %q and %q", k, OverrideCPUKey, OverrideMemoryKey, OverridePodsMetricsKey, OverrideObjectMetricsKey))
		}
	}
	sort.Strings(problems)
	return o, problems
}

func parseOverrideKey(data map[string]string, key string, problems []string) (map[string]float64, []string) {
	text, ok := data[key]
	if !ok {
		return nil, problems
	}
	var entries map[string]any
	if err := yaml.Unmarshal([]byte(text), &entries); err != nil {
		return nil, append(problems, fmt.Sprintf("key %q is not a YAML map of NAMESPACE/WORKLOAD to percent: %v", key, err))
	}
	out := make(map[string]float64, len(entries))
	for workload, raw := range entries {
		if !workloadEntry(workload) {
			problems = append(problems, fmt.Sprintf("key %q: entry %q is not NAMESPACE/WORKLOAD", key, workload))
			continue
		}
		var p float64
		var err error
		switch v := raw.(type) {
		case float64:
			p, err = checkPercent(strconv.FormatFloat(v, 'f', -1, 64), v)
		case string:
			p, err = ParsePercent(v)
		default:
			err = fmt.Errorf("%v is not a number: give a percent from 0 to %d", raw, MaxPercent)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("key %q: entry %q: %v", key, workload, err))
			continue
		}
		out[workload] = p
	}
	return out, problems
}

// Knob is the percents a pod runs at and its values of Pods metrics.
type Knob struct {
	CPU, Memory float64
	// Metrics are the pod's values of Pods metrics, by name.
	Metrics map[string]resource.Quantity
	// Problems describe knob values that were ignored for the defaults
	// (or, for a metric, for no value).
	Problems []string
}

// KnobFor resolves a pod's percents: the override ConfigMap's entry for
// its workload, else the pod's annotation, else the default; and its
// values of Pods metrics (PodMetricValues). A bad annotation is ignored
// and described in Problems.
func KnobFor(pod *corev1.Pod, o Overrides) Knob {
	key := WorkloadKey(pod)
	k := Knob{}
	k.CPU = resolve(pod, key, o.CPU, CPUUtilizationAnnotation, DefaultCPUPercent, &k.Problems)
	k.Memory = resolve(pod, key, o.Memory, MemoryUtilizationAnnotation, DefaultMemoryPercent, &k.Problems)
	var problems []string
	k.Metrics, problems = PodMetricValues(pod, o)
	k.Problems = append(k.Problems, problems...)
	return k
}

func resolve(pod *corev1.Pod, key string, overrides map[string]float64, annotation string, def float64, problems *[]string) float64 {
	if p, ok := overrides[key]; ok {
		return p
	}
	value, ok := pod.Annotations[annotation]
	if !ok {
		return def
	}
	p, err := ParsePercent(value)
	if err != nil {
		*problems = append(*problems, fmt.Sprintf("annotation %s: %v; using the default %g", annotation, err, def))
		return def
	}
	return p
}
