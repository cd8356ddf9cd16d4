package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Condition types of a Work.
const (
	// WorkConditionApplied is True when every manifest was applied to the member.
	WorkConditionApplied = "Applied"
	// WorkConditionDispatching is False (reason Suspended) while the Work's
	// dispatching is suspended, True otherwise.
	WorkConditionDispatching = "Dispatching"
)

// ExecutionNamespacePrefix prefixes the hub namespace that holds a cluster's
// Works: shepherd-es-<cluster>.
const ExecutionNamespacePrefix = "shepherd-es-"

// WorkSpec is what to apply to one member cluster.
type WorkSpec struct {
	// Workload holds the manifests.
	Workload WorkloadTemplate `json:"workload"`
	// SuspendDispatching stops applying changes to the member while true.
	// +optional
	SuspendDispatching bool `json:"suspendDispatching,omitempty"`
	// PreserveResourcesOnDeletion keeps the member's objects when the Work
	// goes, with Shepherd's label and annotation removed from them.
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ConflictResolution: Abort (empty) never touches a member object that
	// this Work did not create or adopt; Overwrite adopts it.
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`
	// ApplyStrategy copied from the binding: how the manifests are written
	// and what happens to drift.
	// +optional
	ApplyStrategy *policyv1alpha1.ApplyStrategy `json:"applyStrategy,omitempty"`
}

// WorkloadTemplate holds manifests.
type WorkloadTemplate struct {
	// Manifests are the objects to apply, with per-cluster replicas written in.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Manifests []Manifest `json:"manifests"`
}

// Manifest is one object to apply.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:EmbeddedResource
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// ResourceIdentifier identifies a manifest's object in the member.
type ResourceIdentifier struct {
	// Ordinal is the manifest's index in spec.workload.manifests.
	Ordinal int32 `json:"ordinal"`
	// +optional
	Group   string `json:"group,omitempty"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// +optional
	Resource string `json:"resource,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ManifestStatus is the member-side status of one manifest.
type ManifestStatus struct {
	Identifier ResourceIdentifier `json:"identifier"`
	// Status is the object's status in the member.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Health from the resource interpreter.
	// +optional
	Health policyv1alpha1.ResourceHealth `json:"health,omitempty"`
	// HealthReason says why Health is Unknown: a rule that failed (its
	// error, e.g. a CEL cost limit) or returned no health, or a status not
	// yet observed.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	HealthReason string `json:"healthReason,omitempty"`
	// Generation is the member object's metadata.generation when its status
	// was read: with the status's observedGeneration it says whether the
	// member's controllers have seen the latest spec (the hub template's
	// status.observedGeneration is set from it).
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// UnschedulableReplicas is how many of the workload's pods in the
	// member its scheduler cannot place (Pending with PodScheduled=False,
	// reason Unschedulable); only for kinds with a pod selector.
	// +optional
	UnschedulableReplicas int32 `json:"unschedulableReplicas,omitempty"`
	// UnschedulableSince is the oldest such pod's PodScheduled=False
	// lastTransitionTime; unset when none is unschedulable.
	// +optional
	UnschedulableSince *metav1.Time `json:"unschedulableSince,omitempty"`
	// UnschedulableComponents break unschedulableReplicas down by
	// component, for a workload made of several pod templates whose
	// operator labels each pod with its component (a RayCluster's head
	// and worker groups): only components with unschedulable pods, in the
	// workload's order. A pod whose labels name none of the workload's
	// components counts in unschedulableReplicas only.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	UnschedulableComponents []UnschedulableComponent `json:"unschedulableComponents,omitempty"`
	// StatusTime is when the reporter (the hub for a Push cluster, the
	// cluster's agent for a Pull one) last saw Status change, on its own
	// clock: the clock that also stamps the Cluster's lastProbeTime, so
	// the scheduler compares the two without trusting two machines' clocks
	// to agree (see the binding's aggregatedStatus[].statusTime).
	// +optional
	StatusTime *metav1.Time `json:"statusTime,omitempty"`
	// AppliedHash identifies what Shepherd last applied for this manifest:
	// drift is judged against it (written by the execution controller).
	// +optional
	AppliedHash string `json:"appliedHash,omitempty"`
	// AppliedGeneration is the member object's generation right after
	// Shepherd's last apply: a later one means someone changed its spec.
	// +optional
	AppliedGeneration int64 `json:"appliedGeneration,omitempty"`
	// ResourceVersion is the member object's resourceVersion when it was
	// last observed, and AppliedResourceVersion right after Shepherd's last
	// apply; both only for kinds without a generation (ConfigMaps, Secrets,
	// Services, RBAC objects): a newer observation than Shepherd's own
	// write means someone else changed the object, which is then compared
	// for drift at once, as a generation past AppliedGeneration is.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// +optional
	AppliedResourceVersion string `json:"appliedResourceVersion,omitempty"`
	// Drift says how the member object differs from what Shepherd applied
	// or would send; unset when it does not.
	// +optional
	Drift *ManifestDrift `json:"drift,omitempty"`
}

// UnschedulableComponent is how many pods of one component a member's
// scheduler cannot place, and since when.
type UnschedulableComponent struct {
	// Name of the component, as in the binding's spec.components[].name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Replicas is how many of the component's pods are unschedulable.
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas"`
	// Since is the oldest such pod's PodScheduled=False lastTransitionTime.
	Since metav1.Time `json:"since"`
}

// WorkStatus is the applied status of a Work.
type WorkStatus struct {
	// Conditions: Applied, Dispatching, Drifted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ManifestStatuses per manifest.
	// +listType=atomic
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
	// PodMetrics is the agent's latest sample of the workload's pods and
	// metrics, at most every sync period, while the Work carries
	// LabelPodMetrics; only for Pull clusters. Written by the agent's pod
	// metrics reporter alone (field manager shepherd-agent-podmetrics).
	// +optional
	PodMetrics *PodMetricsSample `json:"podMetrics,omitempty"`
}

// Work is what the hub applies to one member cluster. It lives in the
// cluster's execution namespace (shepherd-es-<cluster>).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=shepherd
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels.work\.shepherd\.io/cluster`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Drifted",type=string,JSONPath=`.status.conditions[?(@.type=="Drifted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkSpec `json:"spec"`
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkList is a list of Works.
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}
