package simmetrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// The custom metrics knob: the values of simulated custom.metrics.k8s.io
// metrics.
const (
	// MetricAnnotationPrefix begins the annotations that give custom
	// metrics their values. On a pod, or a workload's pod template (which
	// its pods inherit), "metric.sim.shepherd.io/NAME": "VALUE" is the
	// pod's value of the Pods metric NAME; on any other object of a
	// namespace (a Service, an Ingress, a ConfigMap...), the object's
	// value of the Object metric NAME. VALUE is a quantity from 0 to
	// MaxMetricValue: "20", "1500m", "2k". A pod or object without the
	// annotation has no value of the metric: the API does not serve it.
	MetricAnnotationPrefix = "metric.sim.shepherd.io/"

	// OverridePodsMetricsKey, in the override ConfigMap, is a YAML map of
	// "NAMESPACE/WORKLOAD" to a map of metric name to value: every pod of
	// the workload has those values, over its annotations.
	OverridePodsMetricsKey = "pods-metrics"
	// OverrideObjectMetricsKey is a YAML map of "NAMESPACE/RESOURCE/NAME"
	// (RESOURCE as the API's path names it: services,
	// ingresses.networking.k8s.io) to a map of metric name to value: the
	// object's values, over its annotations, whether it exists or not.
	OverrideObjectMetricsKey = "object-metrics"
)

// MaxMetricValue is the largest value a custom metric's knob may give.
var MaxMetricValue = resource.MustParse("1T")

// ParseMetricValue reads a custom metric's knob value: a quantity from 0
// to MaxMetricValue.
func ParseMetricValue(value string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(value))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("%q is not a quantity: give a value from 0 to %s, e.g. \"20\" or \"1500m\"", value, MaxMetricValue.String())
	}
	if q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("%q is negative: give a value from 0 to %s", value, MaxMetricValue.String())
	}
	if q.Cmp(MaxMetricValue) > 0 {
		return resource.Quantity{}, fmt.Errorf("%q is above %s: give a value from 0 to %s", value, MaxMetricValue.String(), MaxMetricValue.String())
	}
	return q, nil
}

// metricName checks a metric's name as the API's path carries it: one
// path segment, as an annotation key's name part allows.
func metricName(name string) error {
	if errs := validation.IsQualifiedName(name); len(errs) > 0 || strings.Contains(name, "/") {
		return fmt.Errorf("metric name %q is not one: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// metricValues reads the custom metrics knob of an object's annotations,
// then overrides its entries with those of override: the object's values
// by metric name. Annotations it cannot use are left out and described in
// problems.
func metricValues(annotations map[string]string, override map[string]resource.Quantity, problems *[]string) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, MetricAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		q, err := ParseMetricValue(annotations[k])
		if err != nil {
			*problems = append(*problems, fmt.Sprintf("annotation %s: %v; no value of metric %s", k, err, strings.TrimPrefix(k, MetricAnnotationPrefix)))
			continue
		}
		out[strings.TrimPrefix(k, MetricAnnotationPrefix)] = q
	}
	for name, q := range override {
		out[name] = q
	}
	return out
}

// PodMetricValues are a pod's values of Pods metrics: its annotations',
// then its workload's entries in the override ConfigMap. Problems
// describe annotations that were ignored.
func PodMetricValues(pod *corev1.Pod, o Overrides) (map[string]resource.Quantity, []string) {
	var problems []string
	return metricValues(pod.Annotations, o.PodsMetrics[WorkloadKey(pod)], &problems), problems
}

// ObjectMetricValues are an object's values of Object metrics: its
// annotations' (none when it does not exist), then its entries in the
// override ConfigMap, under "NAMESPACE/RESOURCE/NAME".
func ObjectMetricValues(annotations map[string]string, key string, o Overrides) (map[string]resource.Quantity, []string) {
	var problems []string
	return metricValues(annotations, o.ObjectMetrics[key], &problems), problems
}

// parseMetricsKey reads an override key of metric values: a YAML map of
// an entry (checked by entryOK, which says what it should be) to a map of
// metric name to value.
func parseMetricsKey(data map[string]string, key string, entryOK func(string) bool, what string, problems []string) (map[string]map[string]resource.Quantity, []string) {
	text, ok := data[key]
	if !ok {
		return nil, problems
	}
	var entries map[string]map[string]any
	if err := yaml.Unmarshal([]byte(text), &entries); err != nil {
		return nil, append(problems, fmt.Sprintf("key %q is not a YAML map of %s to a map of metric name to value: %v", key, what, err))
	}
	out := make(map[string]map[string]resource.Quantity, len(entries))
	for entry, metrics := range entries {
		if !entryOK(entry) {
			problems = append(problems, fmt.Sprintf("key %q: entry %q is not %s", key, entry, what))
			continue
		}
		values := map[string]resource.Quantity{}
		for name, raw := range metrics {
			if err := metricName(name); err != nil {
				problems = append(problems, fmt.Sprintf("key %q: entry %q: %v", key, entry, err))
				continue
			}
			var text string
			switch v := raw.(type) {
			case float64:
				text = strconv.FormatFloat(v, 'f', -1, 64)
			case string:
				text = v
			default:
				problems = append(problems, fmt.Sprintf("key %q: entry %q: metric %s: %v is not a quantity", key, entry, name, raw))
				continue
			}
			q, err := ParseMetricValue(text)
			if err != nil {
				problems = append(problems, fmt.Sprintf("key %q: entry %q: metric %s: %v", key, entry, name, err))
				continue
			}
			values[name] = q
		}
		out[entry] = values
	}
	return out, problems
}

// workloadEntry says whether an entry is NAMESPACE/WORKLOAD.
func workloadEntry(entry string) bool {
	ns, name, found := strings.Cut(entry, "/")
	return found && ns != "" && name != "" && !strings.Contains(name, "/")
}

// objectEntry says whether an entry is NAMESPACE/RESOURCE/NAME.
func objectEntry(entry string) bool {
	parts := strings.Split(entry, "/")
	return len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != ""
}
