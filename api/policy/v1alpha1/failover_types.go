package v1alpha1

// PurgeMode says what happens to the copy of a workload on the cluster it
// is moved away from.
// +kubebuilder:validation:Enum=Immediately;Graciously;Never
type PurgeMode string

// Purge modes.
const (
	// PurgeImmediately deletes the old copy as soon as the cluster is evicted.
	PurgeImmediately PurgeMode = "Immediately"
	// PurgeGraciously keeps the old copy until the workload is Healthy on its
	// new clusters or the grace period ends.
	PurgeGraciously PurgeMode = "Graciously"
	// PurgeNever keeps the old copy until a user confirms its removal.
	PurgeNever PurgeMode = "Never"
)

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
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || self.purgeMode == 'Graciously'",message="failover.application.gracePeriodSeconds is only valid with purgeMode: Graciously"
type ApplicationFailoverBehavior struct {
	// PreConditions must hold before failover is considered at all.
	// +optional
	PreConditions *PreConditions `json:"preConditions,omitempty"`

	// DecisionConditions must hold for failover to happen.
	// +optional
	DecisionConditions DecisionConditions `json:"decisionConditions,omitempty"`

	// PurgeMode says what happens to the old copy.
	// +kubebuilder:default=Graciously
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
	// PurgeMode: Immediately (default) or Graciously.
	// +kubebuilder:default=Immediately
	// +kubebuilder:validation:XValidation:rule="self != 'Never'",message="failover.cluster.purgeMode must be Immediately or Graciously"
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
}
