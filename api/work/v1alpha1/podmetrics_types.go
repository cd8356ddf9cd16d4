package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxPodMetricsPods bounds the pods of a PodMetricsSample: a member that
// runs more of a workload's pods reports the first ones, by name, and says
// so in its error.
const MaxPodMetricsPods = 500

// PodMetricsSample is what the agent of a Pull cluster read of a Work's
// workload in its member, for a FederatedHPA on the hub, which cannot read
// a Pull member itself: the workload's pods, their cpu and memory requests
// and their metrics.k8s.io usage, and the member's own autoscalers of the
// workload. Reported only while the Work carries LabelPodMetrics.
type PodMetricsSample struct {
	// SampleTime is when the agent read the sample, on its own clock.
	SampleTime metav1.Time `json:"sampleTime"`
	// Selector is the label selector of the pods read: the workload's.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Selector string `json:"selector,omitempty"`
	// Error says why the sample is incomplete: the member's
	// metrics.k8s.io API could not be read, or the workload has more than
	// MaxPodMetricsPods pods. Empty when it is complete.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Error string `json:"error,omitempty"`
	// Autoscalers names the member's own HorizontalPodAutoscalers of the
	// workload, sorted: they change its replicas too.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Autoscalers []string `json:"autoscalers,omitempty"`
	// Pods are the workload's pods, sorted by name.
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	// +optional
	Pods []PodSample `json:"pods,omitempty"`
	// CustomMetrics are the custom.metrics.k8s.io metrics the Work asks
	// for (AnnotationCustomMetrics), in the order asked: a Pods metric's
	// values for the pods above, or an Object metric's value.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	CustomMetrics []CustomMetricSample `json:"customMetrics,omitempty"`
}

// CustomMetricSample is one custom.metrics.k8s.io metric of a
// PodMetricsSample, as the agent read it in its member.
type CustomMetricSample struct {
	CustomMetricRequest `json:",inline"`
	// Error says why the metric could not be read, or why its values are
	// incomplete (the workload has more than MaxPodMetricsPods pods).
	// Empty when they are complete.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Error string `json:"error,omitempty"`
	// Timestamp is the newest of the values' timestamps, on the member's
	// metrics API's clock; unset when there are none.
	// +optional
	Timestamp *metav1.Time `json:"timestamp,omitempty"`
	// Value is an Object metric's value.
	// +optional
	Value *resource.Quantity `json:"value,omitempty"`
	// Pods are a Pods metric's values: one per pod of the sample the
	// metrics API gave a value for, sorted by pod name.
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	// +optional
	Pods []PodMetricValue `json:"pods,omitempty"`
}

// PodMetricValue is one pod's value of a Pods metric.
type PodMetricValue struct {
	// +kubebuilder:validation:MaxLength=253
	Pod   string            `json:"pod"`
	Value resource.Quantity `json:"value"`
}

// PodSample is one pod of a PodMetricsSample: what the FederatedHPA's
// rules read of a pod (its phase and readiness, for the CPU
// initialization rule its start and readiness times) and its metrics.
type PodSample struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	Phase corev1.PodPhase `json:"phase,omitempty"`
	// Ready is the pod's Ready condition; ReadyTime its last transition.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// Deleting is set once the pod is being deleted.
	// +optional
	Deleting bool `json:"deleting,omitempty"`
	// Timestamp and Window of the pod's metrics.k8s.io sample; unset when
	// the metrics API has none for the pod.
	// +optional
	Timestamp *metav1.Time `json:"timestamp,omitempty"`
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
	// Containers are the pod's containers, in the pod's order.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Containers []ContainerSample `json:"containers,omitempty"`
}

// ContainerSample is one container's cpu and memory requests and usage,
// each unset when the container has none.
type ContainerSample struct {
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +optional
	CPURequest *resource.Quantity `json:"cpuRequest,omitempty"`
	// +optional
	MemoryRequest *resource.Quantity `json:"memoryRequest,omitempty"`
	// +optional
	CPUUsage *resource.Quantity `json:"cpuUsage,omitempty"`
	// +optional
	MemoryUsage *resource.Quantity `json:"memoryUsage,omitempty"`
}
