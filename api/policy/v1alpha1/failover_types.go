package v1alpha1

// PurgeMode says what happens to the copy of a workload on the cluster it
// is moved away from. Karmada v1.18 renamed Immediately to Directly and
// Graciously to Gracefully; Shepherd accepts both spellings, keeps the one
// the user wrote, and gives each pair one meaning (see Direct, Graceful).
// +kubebuilder:validation:Enum=Directly;Gracefully;Never;Immediately;Graciously
type PurgeMode string

// Purge modes.
const (
	// PurgeDirectly deletes the old copy as soon as the cluster is evicted.
	PurgeDirectly PurgeMode = "Directly"
	// PurgeGracefully keeps the old copy until the workload is Healthy on
	// its new clusters or the grace period ends.
	PurgeGracefully PurgeMode = "Gracefully"
	// PurgeNever keeps the old copy until a user confirms its removal.
	PurgeNever PurgeMode = "Never"
	// PurgeImmediately is the former name of PurgeDirectly.
	PurgeImmediately PurgeMode = "Immediately"
	// PurgeGraciously is the former name of PurgeGracefully.
	PurgeGraciously PurgeMode = "Graciously"
)

// Direct reports whether m deletes the old copy at once (Directly or Immediately).
func (m PurgeMode) Direct() bool { return m == PurgeDirectly || m == PurgeImmediately }

// Graceful reports whether m keeps the old copy for a grace period
// (Gracefully or Graciously).
func (m PurgeMode) Graceful() bool { return m == PurgeGracefully || m == PurgeGraciously }

// ResourceHealth is the health of a workload's copy on one cluster.
// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
type ResourceHealth string

// Health values.
const (
	ResourceHealthy   ResourceHealth = "Healthy"
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	ResourceUnknown   ResourceHealth = "Unknown"
)

// Defaults of the failover behaviour. See docs/failover.md for why the
// toleration default is 300 s rather than the seed's 10 s.
const (
	DefaultTolerationSeconds       int32 = 300
	DefaultGracePeriodSeconds      int32 = 600
	DefaultBlockPredecessorSeconds int32 = 600
)

// FailoverBehavior says how workloads move when they or their clusters fail.
type FailoverBehavior struct {
	// Application failover moves a workload off a cluster where it stays
	// Unhealthy. Nil disables it.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// Cluster failover moves a workload off a cluster tainted NoExecute.
	// Nil uses the defaults (purge Immediately).
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior says when and how an unhealthy workload moves.
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || self.purgeMode in ['Gracefully', 'Graciously']",message="failover.application.gracePeriodSeconds is only valid with purgeMode: Gracefully (or its former name Graciously)"
type ApplicationFailoverBehavior struct {
	// PreConditions must hold before failover is considered at all.
	// +optional
	PreConditions *PreConditions `json:"preConditions,omitempty"`

	// DecisionConditions must hold for failover to happen.
	// +optional
	DecisionConditions DecisionConditions `json:"decisionConditions,omitempty"`

	// PurgeMode says what happens to the old copy.
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// GracePeriodSeconds bounds how long a Graciously purged copy is kept
	// when the new copies do not become Healthy. Defaults to 600.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// BlockPredecessorSeconds keeps an evicted cluster out of scheduling for
	// this long. 0 blocks it until a RescheduleTask or a user clears it.
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=0
	// +optional
	BlockPredecessorSeconds *int32 `json:"blockPredecessorSeconds,omitempty"`

	// StatePreservation carries state of the evicted copy to its replacement.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// StatePreservation reads values from the status of the copy a failover
// evicts and sets them as labels on the copy that replaces it, so a
// stateful application can resume where it was (e.g. a checkpoint ID).
// As in Karmada, the labels go to the new cluster only when the workload
// runs on one cluster after the failover and the old copy is purged
// directly (Directly or Immediately); they stay while the eviction is in
// the binding's history.
type StatePreservation struct {
	// Rules each read one value.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=aliasLabelName
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule reads one value into one label.
type StatePreservationRule struct {
	// AliasLabelName is the label key set on the new copy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	AliasLabelName string `json:"aliasLabelName"`

	// JSONPath, in kubectl's syntax, from the copy's status: {.checkpoint}
	// (or { .checkpoint }) reads status.checkpoint. The value must be a
	// valid label value.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^\{\s*\..*\}$`
	JSONPath string `json:"jsonPath"`
}

// PreConditions gate the start of application failover.
type PreConditions struct {
	// DelaySeconds waits this long after the status is first collected.
	// +kubebuilder:validation:Minimum=0
	// +optional
	DelaySeconds *int32 `json:"delaySeconds,omitempty"`

	// HealthyState: when Healthy, only copies that were once Healthy fail over.
	// +kubebuilder:validation:Enum=Healthy
	// +optional
	HealthyState ResourceHealth `json:"healthyState,omitempty"`
}

// DecisionConditions decide whether failover happens.
type DecisionConditions struct {
	// TolerationSeconds is how long a copy must stay Unhealthy. Defaults to 300.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=0
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// ClusterFailoverBehavior says how workloads leave a failed cluster.
type ClusterFailoverBehavior struct {
	// PurgeMode: Immediately (the default, also spelled Directly) or
	// Gracefully (also Graciously). Karmada defaults to Gracefully; see
	// docs/failover.md for why Shepherd does not.
	// +kubebuilder:default=Immediately
	// +kubebuilder:validation:XValidation:rule="self != 'Never'",message="failover.cluster.purgeMode must be Directly, Gracefully, Immediately or Graciously: Never is for application failover only"
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// StatePreservation carries state of the evicted copy to its replacement.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}
