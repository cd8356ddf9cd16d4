package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Condition types of a binding's rollout (see docs/rollout.md). Only
// bindings with a Progressive or Staged rollout have them.
const (
	// ConditionRolloutProgressing is True while a revision is going out
	// (also while it waits for an approval or a stage's wait).
	ConditionRolloutProgressing = "RolloutProgressing"
	// ConditionRolloutPaused is True while spec.rolloutControl.paused holds
	// the rollout.
	ConditionRolloutPaused = "RolloutPaused"
	// ConditionRolloutFailed is True when more clusters failed than
	// maxFailures allows, or the stages are invalid for the clusters.
	ConditionRolloutFailed = "RolloutFailed"
	// ConditionRolloutComplete is True when every cluster runs the latest
	// revision and has been healthy for minSuccessSeconds.
	ConditionRolloutComplete = "RolloutComplete"
)

// RolloutPhase is where a rollout stands.
type RolloutPhase string

// Rollout phases.
const (
	RolloutPhaseProgressing RolloutPhase = "Progressing"
	// RolloutPhaseWaiting: for an approval, a stage's waitSeconds, or a
	// placement (no cluster is placed yet).
	RolloutPhaseWaiting    RolloutPhase = "Waiting"
	RolloutPhasePaused     RolloutPhase = "Paused"
	RolloutPhaseFailed     RolloutPhase = "Failed"
	RolloutPhaseRolledBack RolloutPhase = "RolledBack"
	RolloutPhaseComplete   RolloutPhase = "Complete"
)

// MaxRolloutApprovals bounds spec.rolloutControl.approvals.
const MaxRolloutApprovals = 64

// RolloutControl is what users decide about a binding's rollout.
type RolloutControl struct {
	// Paused holds the rollout: no cluster is sent a new revision while
	// true (clusters joining the placement still get the last good one).
	// +optional
	Paused bool `json:"paused,omitempty"`

	// Approvals of stages, each for one revision: a later change needs
	// approvals of its own.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Approvals []RolloutApproval `json:"approvals,omitempty"`

	// UndoRevision abandons that revision: the clusters it reached get the
	// last good revision back, and it does not go out again. The next
	// change of the template starts a new rollout.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	UndoRevision string `json:"undoRevision,omitempty"`
}

// RolloutApproval approves one stage of one revision's rollout.
type RolloutApproval struct {
	// Revision the approval is for (status.rollout.revision).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Revision string `json:"revision"`
	// Stage approved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Stage string `json:"stage"`
	// When: Before (the stage may start) or After (the stage after it may
	// start).
	// +kubebuilder:validation:Enum=Before;After
	When policyv1alpha1.ApprovalMode `json:"when"`
	// ApprovedBy is who approved, for the record.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ApprovedBy string `json:"approvedBy,omitempty"`
}

// Approved reports whether c approves stage's when-approval of revision.
func (c *RolloutControl) Approved(revision, stage string, when policyv1alpha1.ApprovalMode) bool {
	if c == nil {
		return false
	}
	for _, a := range c.Approvals {
		if a.Revision == revision && a.Stage == stage && a.When == when {
			return true
		}
	}
	return false
}

// RolloutStatus is where a binding's rollout stands.
type RolloutStatus struct {
	// Revision is the revision going out: a hash of the template and the
	// override policies that apply to it.
	// +optional
	Revision string `json:"revision,omitempty"`
	// LastGoodRevision is the latest revision that reached every cluster
	// and was healthy there: what rollbacks and clusters joining mid-way get.
	// +optional
	LastGoodRevision string `json:"lastGoodRevision,omitempty"`
	// Phase: Progressing, Waiting, Paused, Failed, RolledBack or Complete.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`
	// Message says what the rollout waits for or why it stopped.
	// +optional
	Message string `json:"message,omitempty"`
	// StartedAt is when the revision started going out.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Stages of a Staged rollout and when each started and finished.
	// +optional
	Stages []RolloutStageStatus `json:"stages,omitempty"`
	// Clusters: the revision each cluster was sent, when, and its health.
	// +optional
	Clusters []ClusterRolloutStatus `json:"clusters,omitempty"`
	// History lists the revisions kept (ControllerRevisions owned by the
	// binding), oldest first.
	// +optional
	History []RevisionRecord `json:"history,omitempty"`
}

// RolloutStageStatus is one stage's progress.
type RolloutStageStatus struct {
	Name string `json:"name"`
	// StartedAt is when its first cluster was sent the revision.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// CompletedAt is when its last cluster was done.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// ClusterRolloutStatus is one cluster's part in the rollout.
type ClusterRolloutStatus struct {
	Name string `json:"name"`
	// Stage the cluster is in (Staged rollouts).
	// +optional
	Stage string `json:"stage,omitempty"`
	// Revision its Work holds.
	// +optional
	Revision string `json:"revision,omitempty"`
	// UpdatedAt is when its Work was given that revision.
	// +optional
	UpdatedAt *metav1.Time `json:"updatedAt,omitempty"`
	// HealthySince is when it was last seen healthy and rolled out at that
	// revision; unset while it is not.
	// +optional
	HealthySince *metav1.Time `json:"healthySince,omitempty"`
	// Failed is true when it was not done within progressDeadlineSeconds.
	// +optional
	Failed bool `json:"failed,omitempty"`
}

// RevisionRecord names one kept revision.
type RevisionRecord struct {
	// Revision hash.
	Revision string `json:"revision"`
	// Name of the ControllerRevision holding it.
	Name string `json:"name"`
	// CreatedAt is when it was first rendered.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`
}
