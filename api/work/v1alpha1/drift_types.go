package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Drift: what the execution controller finds when a member object differs
// from what Shepherd applied (or, under ReportDiff, would apply).

// WorkConditionDrifted is True while a member object's fields that
// Shepherd applied were changed by someone else; its message names the
// objects and since when. False (reason DriftResolved or Overwritten)
// once none is; absent on Works that never drifted.
const WorkConditionDrifted = "Drifted"

// Reasons of the Drifted condition, and of the Applied condition under
// ReportDiff.
const (
	// ReasonDriftHeld (Drifted=True): applyStrategy.whenToApply is
	// IfNotDrifted, so the drifted objects are left as they are.
	ReasonDriftHeld = "DriftHeld"
	// ReasonDriftDetected (Drifted=True): whenToApply is Always; an apply
	// puts the fields back after the drift revert delay (or sooner, when
	// the Work changes).
	ReasonDriftDetected = "DriftDetected"
	// ReasonDriftOverwritten (Drifted=False): an apply put the fields back.
	ReasonDriftOverwritten = "Overwritten"
	// ReasonDriftResolved (Drifted=False): the member object matches what
	// Shepherd applied again (the edit was undone) or is gone.
	ReasonDriftResolved = "DriftResolved"
	// ReasonReportDiff (Applied=False): applyStrategy.type is ReportDiff:
	// nothing is applied; the manifests' drift entries say how the
	// member differs.
	ReasonReportDiff = "ReportDiff"
)

// MaxDriftFields bounds the fields one manifest's drift lists; the count
// of the others is kept.
const MaxDriftFields = 16

// MaxDriftValue bounds each value a field diff shows.
const MaxDriftValue = 256

// DriftType says what a manifest's drift entry describes.
// +kubebuilder:validation:Enum=Drifted;Diff
type DriftType string

const (
	// DriftDrifted: fields Shepherd applied were changed in the member.
	DriftDrifted DriftType = "Drifted"
	// DriftDiff: how the member object differs from what would be sent
	// (ReportDiff, or an object not taken over under whenToTakeOver:
	// IfNoDiff).
	DriftDiff DriftType = "Diff"
)

// ManifestDrift is how one member object differs.
type ManifestDrift struct {
	// Type: Drifted or Diff.
	Type DriftType `json:"type"`
	// FirstSeenTime is when this difference was first seen; kept while it
	// lasts.
	FirstSeenTime metav1.Time `json:"firstSeenTime"`
	// MemberGeneration is the member object's generation when compared.
	// +optional
	MemberGeneration int64 `json:"memberGeneration,omitempty"`
	// Missing: the member has no such object (ReportDiff).
	// +optional
	Missing bool `json:"missing,omitempty"`
	// Fields that differ, at most MaxDriftFields, sorted by path.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Fields []FieldDiff `json:"fields,omitempty"`
	// MoreFields counts the differing fields not listed.
	// +optional
	MoreFields int32 `json:"moreFields,omitempty"`
}

// FieldDiff is one field whose member value differs from the hub's.
type FieldDiff struct {
	// Path of the field, e.g. spec.template.spec.containers[0].image.
	Path string `json:"path"`
	// Member is the member's value as JSON (cut to MaxDriftValue); empty
	// when the member lacks the field.
	// +optional
	Member string `json:"member,omitempty"`
	// Hub is the value Shepherd applied or would send, as JSON (cut).
	// +optional
	Hub string `json:"hub,omitempty"`
}
