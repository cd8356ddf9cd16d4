package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{&FederatedHPA{}, &FederatedHPAList{}, &CronFederatedHPA{}, &CronFederatedHPAList{}}
}

// Condition types of a FederatedHPA, as a HorizontalPodAutoscaler's, plus
// one of Shepherd's.
const (
	// ConditionAbleToScale: the target could be read and written.
	ConditionAbleToScale = autoscalingv2.AbleToScale
	// ConditionScalingActive: metrics were read and a replica count computed.
	ConditionScalingActive = autoscalingv2.ScalingActive
	// ConditionScalingLimited: the count computed was outside
	// [minReplicas, maxReplicas], a behavior policy held it back, or the
	// fleet has no room for it (reason NoRoomInFleet).
	ConditionScalingLimited = autoscalingv2.ScalingLimited
	// ConditionMemberAutoscalerConflict is True when a member runs a
	// HorizontalPodAutoscaler of its own on the same workload: both would
	// change its replicas.
	ConditionMemberAutoscalerConflict autoscalingv2.HorizontalPodAutoscalerConditionType = "MemberAutoscalerConflict"
)

// FederatedHPASpec is a HorizontalPodAutoscaler's spec (autoscaling/v2)
// whose metrics are read from every member cluster the target runs in.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="spec.minReplicas must not be greater than spec.maxReplicas: lower minReplicas or raise maxReplicas"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type in ['Resource', 'Pods', 'Object', 'ContainerResource', 'External'])",message="spec.metrics[].type must be one of Resource, Pods, Object, ContainerResource, External"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type != 'Resource' || has(m.resource))",message="spec.metrics[].resource is required when type is Resource"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type != 'Pods' || has(m.pods))",message="spec.metrics[].pods is required when type is Pods"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type != 'Object' || has(m.object))",message="spec.metrics[].object is required when type is Object"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type != 'ContainerResource' || has(m.containerResource))",message="spec.metrics[].containerResource is required when type is ContainerResource"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, m.type != 'External' || has(m.external))",message="spec.metrics[].external is required when type is External"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, !has(m.resource) || !has(m.resource.target.averageUtilization) || (m.resource.target.averageUtilization >= 1 && m.resource.target.averageUtilization <= 100))",message="spec.metrics[].resource.target.averageUtilization must be between 1 and 100 (percent of the pods' requests)"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, !has(m.containerResource) || !has(m.containerResource.target.averageUtilization) || (m.containerResource.target.averageUtilization >= 1 && m.containerResource.target.averageUtilization <= 100))",message="spec.metrics[].containerResource.target.averageUtilization must be between 1 and 100 (percent of the containers' requests)"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || self.metrics.all(m, !has(m.resource) || m.resource.target.type in ['Utilization', 'AverageValue'])",message="spec.metrics[].resource.target.type must be Utilization or AverageValue"
type FederatedHPASpec struct {
	// ScaleTargetRef names the workload to scale, in the FederatedHPA's
	// own namespace (it has no namespace of its own): a resource template
	// on the hub whose replicas Shepherd divides among member clusters.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// MinReplicas is the lowest count the autoscaler sets (default 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the highest count the autoscaler sets.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// Metrics to scale on, as a HorizontalPodAutoscaler's; the replica
	// count is the highest any of them asks for. Empty: CPU at 80%
	// utilization, as a HorizontalPodAutoscaler's default.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior bounds how fast the count changes, as a
	// HorizontalPodAutoscaler's (scale-down waits a 300 s stabilization
	// window by default).
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// ClusterUtilization is what one member cluster's pods of the target
// measured at the last computation.
type ClusterUtilization struct {
	// Name of the member cluster.
	Name string `json:"name"`
	// Pods of the target found there.
	Pods int32 `json:"pods"`
	// ReadyPods among them.
	// +optional
	ReadyPods int32 `json:"readyPods,omitempty"`
	// Resources measured there: the average over the pods with metrics.
	// +listType=map
	// +listMapKey=name
	// +optional
	Resources []ResourceUtilization `json:"resources,omitempty"`
	// Excluded says why the cluster was left out of the average (its
	// metrics are missing or stale, or it could not be reached); empty
	// when it counted.
	// +optional
	Excluded string `json:"excluded,omitempty"`
}

// ResourceUtilization is one resource's average over a cluster's pods.
type ResourceUtilization struct {
	// Name of the resource (cpu, memory).
	Name corev1.ResourceName `json:"name"`
	// AverageUtilization is the usage as a percent of the pods' requests,
	// when they request the resource.
	// +optional
	AverageUtilization *int32 `json:"averageUtilization,omitempty"`
	// AverageValue is the usage per pod.
	// +optional
	AverageValue *resource.Quantity `json:"averageValue,omitempty"`
}

// FederatedHPAStatus is a HorizontalPodAutoscaler's status plus what each
// member cluster measured.
type FederatedHPAStatus struct {
	// ObservedGeneration is the generation this status was computed for.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	// LastScaleTime is when the target's replicas were last changed.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// CurrentReplicas is the target's replicas at the last computation.
	// +optional
	CurrentReplicas int32 `json:"currentReplicas,omitempty"`
	// DesiredReplicas is the count computed last.
	// +optional
	DesiredReplicas int32 `json:"desiredReplicas"`
	// CurrentMetrics are the values read for spec.metrics, over the fleet.
	// +listType=atomic
	// +optional
	CurrentMetrics []autoscalingv2.MetricStatus `json:"currentMetrics,omitempty"`
	// Conditions: AbleToScale, ScalingActive, ScalingLimited and
	// MemberAutoscalerConflict.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []autoscalingv2.HorizontalPodAutoscalerCondition `json:"conditions,omitempty"`
	// Clusters is what each member cluster running the target measured,
	// sorted by cluster name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Clusters []ClusterUtilization `json:"clusters,omitempty"`
}

// FederatedHPA scales a workload of the hub from the metrics of its pods
// in every member cluster it runs in, as a HorizontalPodAutoscaler scales
// it in one cluster: it sets the template's spec.replicas, and the
// propagation policy divides them among the clusters.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fhpa,categories=shepherd
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="Min",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="Current",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.status.desiredReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FederatedHPASpec `json:"spec"`
	// +optional
	Status FederatedHPAStatus `json:"status,omitempty"`
}

// FederatedHPAList is a list of FederatedHPAs.
// +kubebuilder:object:root=true
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedHPA `json:"items"`
}
