package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// This file holds spec.rollout: how a change of what clusters are sent (a
// template edit, an override change) reaches them. The binding controller
// gates each cluster's Work on it; see docs/rollout.md.

// RolloutType is how a change reaches the clusters.
// +kubebuilder:validation:Enum=All;Progressive;Staged
type RolloutType string

const (
	// RolloutAll sends a change to every cluster at once (the default).
	RolloutAll RolloutType = "All"
	// RolloutProgressive sends it to maxConcurrency clusters at a time, in
	// the order of their names.
	RolloutProgressive RolloutType = "Progressive"
	// RolloutStaged sends it stage after stage, each stage's clusters
	// chosen by its selector, with approvals and waits between stages.
	RolloutStaged RolloutType = "Staged"
)

// ApprovalMode says whether a stage waits for a user's approval.
// +kubebuilder:validation:Enum=None;Before;After
type ApprovalMode string

const (
	// ApprovalNone: the stage starts and ends on its own.
	ApprovalNone ApprovalMode = "None"
	// ApprovalBefore: the stage starts only once approved
	// (`shepherd rollout approve`).
	ApprovalBefore ApprovalMode = "Before"
	// ApprovalAfter: the stage after it starts only once this stage is
	// done and approved.
	ApprovalAfter ApprovalMode = "After"
)

// Defaults of a rollout strategy.
const (
	DefaultProgressDeadlineSeconds = 600
	DefaultRevisionHistoryLimit    = 5
)

// RolloutStrategy says how a change reaches the clusters of a placement.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'Staged' || (has(self.stages) && size(self.stages) > 0)",message="spec.rollout.stages: a Staged rollout needs at least one stage; add stages or use type Progressive"
// +kubebuilder:validation:XValidation:rule="!has(self.stages) || size(self.stages) == 0 || (has(self.type) && self.type == 'Staged')",message="spec.rollout.stages: stages apply to type Staged only; set type: Staged or remove stages"
// +kubebuilder:validation:XValidation:rule="!has(self.maxConcurrency) || (has(self.type) && self.type != 'All')",message="spec.rollout.maxConcurrency: applies to Progressive and Staged rollouts; type All sends every cluster at once"
type RolloutStrategy struct {
	// Type: All (the default; every cluster at once), Progressive or Staged.
	// +kubebuilder:default=All
	// +optional
	Type RolloutType `json:"type,omitempty"`

	// MaxConcurrency is how many clusters update at once: a number (at
	// least 1) or a percentage of the placement's clusters (1% to 100%,
	// rounded down, at least one cluster). Progressive defaults to 1; a
	// Staged rollout defaults to the whole stage.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]?|100)%$')",message="spec.rollout.maxConcurrency: must be a number of at least 1 or a percentage from 1% to 100%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MinSuccessSeconds: a cluster counts as done once it has been healthy
	// and rolled out for this long.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	MinSuccessSeconds int32 `json:"minSuccessSeconds,omitempty"`

	// ProgressDeadlineSeconds: a cluster not done this long after it was
	// sent the change has failed. Defaults to 600.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// MaxFailures is how many clusters may fail before the rollout stops:
	// a number or a percentage of the placement's clusters (rounded down).
	// Defaults to 0: the first failure stops it.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^([0-9]|[1-9][0-9]|100)%$')",message="spec.rollout.maxFailures: must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// RollbackOnFailure puts the last good revision back on the clusters a
	// stopped rollout reached. Without a last good revision (no rollout
	// has completed yet) the binding's RolloutFailed condition says so and
	// nothing is rolled back.
	// +optional
	RollbackOnFailure bool `json:"rollbackOnFailure,omitempty"`

	// RevisionHistoryLimit is how many rendered revisions a binding keeps
	// for rollbacks (besides those some cluster runs). Defaults to 5.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Stages of a Staged rollout, in order. Clusters no stage selects
	// update after the last stage.
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=name
	// +optional
	Stages []RolloutStage `json:"stages,omitempty"`
}

// RolloutStage is one step of a Staged rollout.
type RolloutStage struct {
	// Name of the stage, as `shepherd rollout approve --stage` takes it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// ClusterSelector picks the stage's clusters by label. It must say
	// something: an empty selector would pick every cluster.
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.rollout.stages[].clusterSelector: needs matchLabels or matchExpressions; an empty selector would pick every cluster"
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`

	// Approval: None (the default), Before (the stage waits for an
	// approval to start) or After (the next stage waits for an approval
	// once this one is done).
	// +kubebuilder:default=None
	// +optional
	Approval ApprovalMode `json:"approval,omitempty"`

	// WaitSeconds the next stage waits once this one is done.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	WaitSeconds int32 `json:"waitSeconds,omitempty"`
}

// Gated reports whether the strategy holds changes back: Progressive or
// Staged. A nil strategy is type All.
func (s *RolloutStrategy) Gated() bool {
	return s != nil && (s.Type == RolloutProgressive || s.Type == RolloutStaged)
}
