package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// MaxCustomMetrics bounds the custom metrics AnnotationCustomMetrics may
// ask an agent for, and a PodMetricsSample's CustomMetrics: as many as a
// FederatedHPA has metrics.
const MaxCustomMetrics = 16

// CustomMetricRequest is one custom.metrics.k8s.io metric a Work asks
// its agent to read for a FederatedHPA (AnnotationCustomMetrics): a Pods
// metric of the workload's pods, or, with Object set, an Object metric of
// an object in the workload's namespace.
type CustomMetricRequest struct {
	// Name is the metric's name.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Selector is the metric's label selector (the API's
	// metricLabelSelector), as a string; empty: none.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Selector string `json:"selector,omitempty"`
	// Object is the object an Object metric describes, in the workload's
	// namespace; unset for a Pods metric.
	// +optional
	Object *CustomMetricObject `json:"object,omitempty"`
}

// CustomMetricObject names the object an Object metric describes.
type CustomMetricObject struct {
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// String names the metric in messages: "pods metric NAME" or "object
// metric NAME of KIND NAME", with its selector when it has one.
func (r CustomMetricRequest) String() string {
	s := "pods metric " + r.Name
	if r.Object != nil {
		s = fmt.Sprintf("object metric %s of %s %s", r.Name, r.Object.Kind, r.Object.Name)
	}
	if r.Selector != "" {
		s += " {" + r.Selector + "}"
	}
	return s
}

// FormatCustomMetrics writes requests as AnnotationCustomMetrics holds
// them: a JSON list, in the order given; empty for none.
func FormatCustomMetrics(requests []CustomMetricRequest) string {
	if len(requests) == 0 {
		return ""
	}
	data, err := json.Marshal(requests)
	if err != nil {
		// A list of strings and a struct of strings always marshals.
		panic(err)
	}
	return string(data)
}

// ParseCustomMetrics reads AnnotationCustomMetrics, and says what is
// wrong with it: not a JSON list of requests, more than MaxCustomMetrics
// of them, a request without a name, or an object without a kind, an
// apiVersion or a name.
func ParseCustomMetrics(s string) ([]CustomMetricRequest, error) {
	if s == "" {
		return nil, nil
	}
	var out []CustomMetricRequest
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON list of metrics: %v", AnnotationCustomMetrics, err)
	}
	if len(out) > MaxCustomMetrics {
		return nil, fmt.Errorf("annotation %s asks for %d metrics, at most %d", AnnotationCustomMetrics, len(out), MaxCustomMetrics)
	}
	for i, r := range out {
		switch {
		case r.Name == "":
			return nil, fmt.Errorf("annotation %s: metric %d has no name", AnnotationCustomMetrics, i)
		case r.Object != nil && (r.Object.APIVersion == "" || r.Object.Kind == "" || r.Object.Name == ""):
			return nil, fmt.Errorf("annotation %s: the object of metric %s needs an apiVersion, a kind and a name", AnnotationCustomMetrics, r.Name)
		}
	}
	return out, nil
}
