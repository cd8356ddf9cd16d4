package v1alpha1

// This file holds spec.applyStrategy: how Shepherd writes a template's
// copies into members and what it does about edits made there (drift).
// The words are KubeFleet's.

// ApplyStrategy says how the copies of a policy's templates are written
// into members and what happens to fields someone changed there.
// +kubebuilder:validation:XValidation:rule="!has(self.takeOverFrom) || (has(self.whenToTakeOver) && self.whenToTakeOver == 'IfNoDiff')",message="applyStrategy.takeOverFrom takes over only objects that already match what would be sent: set applyStrategy.whenToTakeOver: IfNoDiff beside it"
type ApplyStrategy struct {
	// Type: ServerSideApply (the default) writes the copies; ReportDiff
	// writes nothing and reports, per cluster, how the member's objects
	// differ from what would be sent.
	// +kubebuilder:default=ServerSideApply
	// +optional
	Type ApplyStrategyType `json:"type,omitempty"`

	// WhenToApply: Always (the default) applies every change and, at the
	// next apply, puts back fields changed in the member (reporting the
	// drift until then); IfNotDrifted leaves an object whose fields were
	// changed in the member as it is, and reports it, until the drift is
	// resolved (the member's edit undone, or the object deleted).
	// +kubebuilder:default=Always
	// +optional
	WhenToApply WhenToApply `json:"whenToApply,omitempty"`

	// WhenToTakeOver: Always (the default) leaves taking over an object
	// Shepherd did not create to spec.conflictResolution; IfNoDiff also
	// takes over, under conflictResolution: Abort, an object Shepherd
	// never wrote that already matches what would be sent (and reports
	// how it differs otherwise).
	// +kubebuilder:default=Always
	// +optional
	WhenToTakeOver WhenToTakeOver `json:"whenToTakeOver,omitempty"`

	// TakeOverFrom narrows whenToTakeOver: IfNoDiff to the objects another
	// multi-cluster system wrote, for moving a running fleet to Shepherd.
	// Karmada: only an object that Karmada's execution controller wrote
	// (its label karmada.io/managed: "true" and the name and namespace of
	// its Work, in a karmada-es-<cluster> namespace, on the object) and
	// that matches what would be sent is taken over; any other object
	// Shepherd did not create is a conflict and stays untouched, even if
	// it matches. Requires whenToTakeOver: IfNoDiff.
	// +optional
	TakeOverFrom TakeOverSource `json:"takeOverFrom,omitempty"`
}

// TakeOverSource is spec.applyStrategy.takeOverFrom.
// +kubebuilder:validation:Enum=Karmada
type TakeOverSource string

// Systems whose objects can be taken over.
const (
	TakeOverFromKarmada TakeOverSource = "Karmada"
)

// ApplyStrategyType is spec.applyStrategy.type.
// +kubebuilder:validation:Enum=ServerSideApply;ReportDiff
type ApplyStrategyType string

// Apply strategy types.
const (
	ApplyServerSide ApplyStrategyType = "ServerSideApply"
	ApplyReportDiff ApplyStrategyType = "ReportDiff"
)

// WhenToApply is spec.applyStrategy.whenToApply.
// +kubebuilder:validation:Enum=Always;IfNotDrifted
type WhenToApply string

// When to apply.
const (
	ApplyAlways       WhenToApply = "Always"
	ApplyIfNotDrifted WhenToApply = "IfNotDrifted"
)

// WhenToTakeOver is spec.applyStrategy.whenToTakeOver.
// +kubebuilder:validation:Enum=Always;IfNoDiff
type WhenToTakeOver string

// When to take over.
const (
	TakeOverAlways   WhenToTakeOver = "Always"
	TakeOverIfNoDiff WhenToTakeOver = "IfNoDiff"
)

// ReportsDiff reports whether s applies nothing and reports differences.
func (s *ApplyStrategy) ReportsDiff() bool { return s != nil && s.Type == ApplyReportDiff }

// HoldsDrift reports whether s leaves drifted objects as they are.
func (s *ApplyStrategy) HoldsDrift() bool { return s != nil && s.WhenToApply == ApplyIfNotDrifted }

// TakesOverOnlyFrom is the system whose objects alone s takes over ("":
// any object no Work wrote).
func (s *ApplyStrategy) TakesOverOnlyFrom() TakeOverSource {
	if s == nil {
		return ""
	}
	return s.TakeOverFrom
}

// TakesOverIfNoDiff reports whether s takes over matching objects.
func (s *ApplyStrategy) TakesOverIfNoDiff() bool {
	return s != nil && s.WhenToTakeOver == TakeOverIfNoDiff
}
