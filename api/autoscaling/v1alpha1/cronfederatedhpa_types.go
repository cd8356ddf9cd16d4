package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronFederatedHPASpec says when to scale a target, and to what.
type CronFederatedHPASpec struct {
	// ScaleTargetRef names what to scale, in the CronFederatedHPA's own
	// namespace: a workload template on the hub (its spec.replicas is
	// set), or a FederatedHPA (its minReplicas and maxReplicas are set).
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// Rules are the schedules and what each sets; names are unique.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one schedule and what it sets.
// +kubebuilder:validation:XValidation:rule="has(self.targetReplicas) || has(self.targetMinReplicas) || has(self.targetMaxReplicas)",message="spec.rules[]: set targetReplicas (a workload) or targetMinReplicas/targetMaxReplicas (a FederatedHPA)"
// +kubebuilder:validation:XValidation:rule="!has(self.targetMinReplicas) || !has(self.targetMaxReplicas) || self.targetMinReplicas <= self.targetMaxReplicas",message="spec.rules[].targetMinReplicas must not be greater than targetMaxReplicas"
type CronFederatedHPARule struct {
	// Name identifies the rule and its history in the status: renaming a
	// rule starts a new history.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`

	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week) or a descriptor such as @hourly, as
	// a CronJob's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Schedule string `json:"schedule"`

	// TargetReplicas is the replica count to set on a workload.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`

	// TargetMinReplicas is the minReplicas to set on a FederatedHPA
	// (unset: left as it is).
	// +kubebuilder:validation:Minimum=1
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`

	// TargetMaxReplicas is the maxReplicas to set on a FederatedHPA
	// (unset: left as it is).
	// +kubebuilder:validation:Minimum=1
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`

	// Suspend stops the rule's runs until it is false again; a run missed
	// while suspended is not caught up.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// TimeZone of the schedule, a name of the IANA time zone database
	// (Europe/Paris); unset is the controller manager's zone.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// SuccessfulHistoryLimit is how many successful runs the status keeps
	// for the rule (default 3).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// FailedHistoryLimit is how many failed runs the status keeps for the
	// rule (default 3).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is the history of each rule.
type CronFederatedHPAStatus struct {
	// ExecutionHistories holds one entry per rule.
	// +listType=map
	// +listMapKey=ruleName
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory is what a rule did.
type ExecutionHistory struct {
	// RuleName is the rule's name.
	RuleName string `json:"ruleName"`
	// NextExecutionTime is when the rule runs next; unset while it is
	// suspended.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`
	// LastScheduleTime is the latest scheduled time the rule handled (run,
	// failed or skipped): a scheduled time is never handled twice, a
	// restart included.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// SuccessfulExecutions are the latest successful runs, newest first.
	// +listType=atomic
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`
	// FailedExecutions are the latest failed runs, newest first.
	// +listType=atomic
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution is one successful run.
type SuccessfulExecution struct {
	// ScheduleTime is the time the schedule named.
	ScheduleTime *metav1.Time `json:"scheduleTime"`
	// ExecutionTime is when it ran.
	ExecutionTime *metav1.Time `json:"executionTime"`
	// AppliedReplicas is the replicas set on a workload.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`
	// AppliedMaxReplicas is the maxReplicas set on a FederatedHPA.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`
	// AppliedMinReplicas is the minReplicas set on a FederatedHPA.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
	// Message says more, e.g. that a run missed during a restart was
	// caught up late.
	// +optional
	Message string `json:"message,omitempty"`
}

// FailedExecution is one failed run.
type FailedExecution struct {
	// ScheduleTime is the time the schedule named.
	ScheduleTime *metav1.Time `json:"scheduleTime"`
	// ExecutionTime is when it ran.
	ExecutionTime *metav1.Time `json:"executionTime"`
	// Message says why it failed.
	Message string `json:"message"`
}

// CronFederatedHPA scales a workload template, or sets a FederatedHPA's
// bounds, at the times of cron schedules.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cronfhpa,categories=shepherd
// +kubebuilder:printcolumn:name="Target-Kind",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CronFederatedHPASpec `json:"spec"`
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPAList is a list of CronFederatedHPAs.
// +kubebuilder:object:root=true
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronFederatedHPA `json:"items"`
}
