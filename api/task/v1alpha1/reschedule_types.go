package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{&RescheduleTask{}, &RescheduleTaskList{}}
}

// Condition types of a RescheduleTask.
const (
	// ConditionCompleted is True when every target finished.
	ConditionCompleted = "Completed"
)

// RescheduleTaskSpec selects the workloads to reschedule.
// +kubebuilder:validation:XValidation:rule="(has(self.targetRefPolicy) && size(self.targetRefPolicy) > 0) || (has(self.targetRefResource) && size(self.targetRefResource) > 0)",message="spec: set at least one target in targetRefPolicy or targetRefResource"
type RescheduleTaskSpec struct {
	// TargetRefPolicy reschedules every workload a policy currently governs.
	// An empty namespace names a ClusterPropagationPolicy.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	TargetRefPolicy []PolicySelector `json:"targetRefPolicy,omitempty"`

	// TargetRefResource reschedules these resource templates.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +optional
	TargetRefResource []ResourceSelector `json:"targetRefResource,omitempty"`

	// TTLSecondsAfterFinished deletes the task this long after it finished.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// PolicySelector names a policy.
type PolicySelector struct {
	// Namespace of a PropagationPolicy; empty for a ClusterPropagationPolicy.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the policy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ResourceSelector names a resource template.
type ResourceSelector struct {
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// TargetPhase is how far a target got.
// +kubebuilder:validation:Enum=Pending;Successful;Failed
type TargetPhase string

// Target phases.
const (
	TargetPending    TargetPhase = "Pending"
	TargetSuccessful TargetPhase = "Successful"
	TargetFailed     TargetPhase = "Failed"
)

// TargetStatus is the outcome for one selected workload.
type TargetStatus struct {
	// Resource is the workload.
	Resource ResourceSelector `json:"resource"`
	// Binding is the namespace/name of its binding.
	// +optional
	Binding string `json:"binding,omitempty"`
	// Phase: Pending, Successful or Failed.
	Phase TargetPhase `json:"phase"`
	// Reason for Failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// FinishedAt is when the target left Pending.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// RescheduleTaskStatus reports progress.
type RescheduleTaskStatus struct {
	// Conditions: Completed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Targets per selected workload.
	// +listType=atomic
	// +optional
	Targets []TargetStatus `json:"targets,omitempty"`
	// CompletionTime is when every target finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// RescheduleTask asks the scheduler to recompute the placement of workloads
// whose placement and replicas did not change (e.g. to move replicas back
// after a failed cluster recovered). Unlike a create-only API, it is a stored
// object with a status you can watch.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=rt,categories=shepherd
// +kubebuilder:printcolumn:name="Completed",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RescheduleTask struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RescheduleTaskSpec `json:"spec"`
	// +optional
	Status RescheduleTaskStatus `json:"status,omitempty"`
}

// RescheduleTaskList is a list of RescheduleTasks.
// +kubebuilder:object:root=true
type RescheduleTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RescheduleTask `json:"items"`
}
