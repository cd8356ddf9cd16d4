package podsample

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// customMetricsPath is the root of the custom metrics API the
// FederatedHPA reads (custom.metrics.k8s.io/v1beta2, a
// HorizontalPodAutoscaler's preferred version).
var customMetricsPath = "/apis/" + custommetricsv1beta2.SchemeGroupVersion.String()

// ReadCustomMetric reads one custom.metrics.k8s.io/v1beta2 metric in a
// member, through kube's REST client: a Pods metric's values for the
// pods of namespace that podSelector selects, or an Object metric's value
// (one item) of the object req names in namespace, whose resource mapper
// finds from its kind. The errors say what failed, not which metric (the
// caller names it), and keep the API's status (a metric the member does
// not serve is NotFound).
func ReadCustomMetric(ctx context.Context, kube kubernetes.Interface, mapper meta.RESTMapper, namespace, podSelector string, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	resource, name := "pods", custommetricsv1beta2.AllObjects
	if req.Object != nil {
		gv, err := schema.ParseGroupVersion(req.Object.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("apiVersion %q: %v", req.Object.APIVersion, err)
		}
		if mapper == nil {
			return nil, errors.New("no mapping of kinds to resources for the member")
		}
		m, err := mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: req.Object.Kind}, gv.Version)
		if err != nil {
			if r, ok := mapper.(interface{ Reset() }); ok && meta.IsNoMatchError(err) {
				// A kind installed since the mapper's discovery is found
				// on the next read.
				r.Reset()
			}
			return nil, fmt.Errorf("the member has no kind %s in %s: %w", req.Object.Kind, req.Object.APIVersion, err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			return nil, fmt.Errorf("%s is not namespaced: an Object metric describes an object of the workload's namespace", req.Object.Kind)
		}
		resource, name = m.Resource.GroupResource().String(), req.Object.Name
	}
	r := kube.Discovery().RESTClient().Get().AbsPath(customMetricsPath, "namespaces", namespace, resource, name, req.Name)
	if req.Object == nil {
		r = r.Param("labelSelector", podSelector)
	}
	if req.Selector != "" {
		r = r.Param("metricLabelSelector", req.Selector)
	}
	raw, err := r.Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("custom.metrics.k8s.io/v1beta2 (does a metrics adapter in the member serve the metric?): %w", err)
	}
	list := &custommetricsv1beta2.MetricValueList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("decoding custom.metrics.k8s.io/v1beta2 values: %w", err)
	}
	if req.Object != nil && len(list.Items) != 1 {
		return nil, fmt.Errorf("the custom metrics API gave %d values for the object, want one", len(list.Items))
	}
	return list.Items, nil
}

// CustomInput is what the agent read of one metric the Work asks for.
type CustomInput struct {
	Request workv1alpha1.CustomMetricRequest
	Values  []custommetricsv1beta2.MetricValue
	Err     error
}

// customSample is one metric of the sample: a Pods metric's values of
// the sample's pods (sorted by pod), or an Object metric's value, and
// why it is missing or incomplete (truncated: the pods the sample left
// out).
func customSample(in CustomInput, pods map[string]bool, truncated string) workv1alpha1.CustomMetricSample {
	s := workv1alpha1.CustomMetricSample{CustomMetricRequest: in.Request}
	var errs []string
	if in.Err != nil {
		errs = append(errs, in.Err.Error())
	}
	if in.Request.Object == nil && truncated != "" {
		errs = append(errs, truncated)
	}
	s.Error = truncate(strings.Join(errs, "; "), maxError)
	var newest time.Time
	for _, v := range in.Values {
		if in.Request.Object == nil && !pods[v.DescribedObject.Name] {
			continue
		}
		if v.Timestamp.After(newest) {
			newest = v.Timestamp.Time
		}
		if in.Request.Object != nil {
			q := v.Value
			s.Value = &q
			continue
		}
		s.Pods = append(s.Pods, workv1alpha1.PodMetricValue{Pod: v.DescribedObject.Name, Value: v.Value})
	}
	slices.SortFunc(s.Pods, func(a, b workv1alpha1.PodMetricValue) int { return strings.Compare(a.Pod, b.Pod) })
	s.Pods = slices.CompactFunc(s.Pods, func(a, b workv1alpha1.PodMetricValue) bool { return a.Pod == b.Pod })
	if !newest.IsZero() {
		s.Timestamp = &metav1.Time{Time: newest}
	}
	return s
}

// ErrNotReported says that the agent's sample has no entry for a metric:
// it has not read the Work's request for it yet.
var ErrNotReported = errors.New("not reported by the agent yet")

// CustomMetric reads back from the sample the values of the metric req
// names, as ReadCustomMetric gives them (each value stamped with the
// newest time), or the error the agent met reading them.
func CustomMetric(s *workv1alpha1.PodMetricsSample, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	for _, c := range s.CustomMetrics {
		if !sameRequest(c.CustomMetricRequest, req) {
			continue
		}
		if c.Error != "" {
			return nil, errors.New(c.Error)
		}
		var ts metav1.Time
		if c.Timestamp != nil {
			ts = *c.Timestamp
		}
		metric := custommetricsv1beta2.MetricIdentifier{Name: c.Name}
		if c.Object != nil {
			if c.Value == nil {
				return nil, nil
			}
			return []custommetricsv1beta2.MetricValue{{Metric: metric, Timestamp: ts, Value: *c.Value,
				DescribedObject: objectReference(c.Object)}}, nil
		}
		out := make([]custommetricsv1beta2.MetricValue, 0, len(c.Pods))
		for _, p := range c.Pods {
			out = append(out, custommetricsv1beta2.MetricValue{Metric: metric, Timestamp: ts, Value: p.Value,
				DescribedObject: objectReference(&workv1alpha1.CustomMetricObject{APIVersion: "v1", Kind: "Pod", Name: p.Pod})})
		}
		return out, nil
	}
	return nil, ErrNotReported
}

func sameRequest(a, b workv1alpha1.CustomMetricRequest) bool {
	if a.Name != b.Name || a.Selector != b.Selector || (a.Object == nil) != (b.Object == nil) {
		return false
	}
	return a.Object == nil || *a.Object == *b.Object
}

func objectReference(o *workv1alpha1.CustomMetricObject) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name}
}
