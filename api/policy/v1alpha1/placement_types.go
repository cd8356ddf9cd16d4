package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement says where a workload may run and how its replicas are divided.
//
// The vocabulary of other schedulers maps onto it (see docs/placement.md):
// "all clusters" (PickAll) is Duplicated with no cluster spread constraint,
// "the best N clusters" (PickN) is a cluster spread constraint with
// minGroups = maxGroups = N, and "these clusters" (PickFixed) is
// clusterAffinity.clusterNames.
// +kubebuilder:validation:XValidation:rule="!(has(self.clusterAffinity) && has(self.clusterAffinities))",message="spec.placement.clusterAffinity and spec.placement.clusterAffinities are mutually exclusive: keep one"
// +kubebuilder:validation:XValidation:rule="!(has(self.components) && has(self.components.division) && self.components.division == 'DivideIndependent' && has(self.spreadConstraints) && size(self.spreadConstraints) > 0)",message="spec.placement.components.division: DivideIndependent puts a workload's head on one cluster and divides its divisible components by room; spreadConstraints do not apply to that: remove them, or keep division: Whole"
type Placement struct {
	// ClusterAffinity restricts the clusters the workload may run on.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities are ordered fallback affinity terms: the scheduler tries
	// the first term and moves to the next only when the workload cannot be
	// scheduled with it. A reschedule starts again from the first term.
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=affinityName
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// PreferredClusterAffinities raise (positive weight) or lower (negative
	// weight) the score of the clusters they match. Not in Karmada.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	PreferredClusterAffinities []WeightedClusterAffinityTerm `json:"preferredClusterAffinities,omitempty"`

	// ClusterTolerations let the workload go to clusters with matching taints.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')",message="spec.placement.clusterTolerations[].value must be empty when operator is Exists"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Exists', 'Equal'])",message="spec.placement.clusterTolerations[].operator must be Exists or Equal"
	// +listType=atomic
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints spread the workload over groups of clusters.
	// Ignored by static weights (see docs/scheduling.md).
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(x, !has(x.spreadByField) || self.exists_one(y, has(y.spreadByField) && y.spreadByField == x.spreadByField))",message="spec.placement.spreadConstraints: at most one constraint per spreadByField"
	// +kubebuilder:validation:XValidation:rule="self.all(x, !has(x.spreadByLabel) || self.exists_one(y, has(y.spreadByLabel) && y.spreadByLabel == x.spreadByLabel))",message="spec.placement.spreadConstraints: at most one constraint per spreadByLabel"
	// +kubebuilder:validation:XValidation:rule="!self.exists(x, has(x.spreadByField) && x.spreadByField != 'cluster') || self.exists(x, has(x.spreadByField) && x.spreadByField == 'cluster')",message="spec.placement.spreadConstraints: spreading by provider, region or zone needs a constraint with spreadByField: cluster as well"
	// +listType=atomic
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling says how replicas are placed. Nil means Duplicated.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity places the workload relative to the other workloads
	// of its group: with them (affinity) or apart from them (antiAffinity).
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`

	// ReplicaLimits lower the controller manager's replica limits for these
	// templates; they can never raise them. Not in Karmada.
	// +optional
	ReplicaLimits *ReplicaLimits `json:"replicaLimits,omitempty"`

	// Components says how a workload made of several pod templates (a
	// RayCluster's head and worker groups, a custom kind's components) is
	// placed: whole in each selected cluster (the default), or with its
	// divisible components divided over clusters. Other workloads ignore
	// it. Not in Karmada.
	// +optional
	Components *ComponentsPlacement `json:"components,omitempty"`
}

// ComponentDivision says whether a workload's components may be divided
// over clusters.
// +kubebuilder:validation:Enum=Whole;DivideIndependent
type ComponentDivision string

// Component divisions.
const (
	// ComponentDivisionWhole places every component of the workload, with
	// all its replicas, in each selected cluster.
	ComponentDivisionWhole ComponentDivision = "Whole"
	// ComponentDivisionDivideIndependent places the components that are
	// not divisible (the head) whole in one cluster, and divides the
	// replicas of each divisible component over the clusters with room.
	ComponentDivisionDivideIndependent ComponentDivision = "DivideIndependent"
)

// ComponentsPlacement says how a workload's components are placed.
type ComponentsPlacement struct {
	// Division: Whole (the default) places every component in each
	// selected cluster, whole. DivideIndependent places the components
	// its kind's components rule does not mark divisible together, whole,
	// in one cluster (the head cluster), and divides the replicas of each
	// divisible component over the clusters that pass the filters, by
	// their room node by node; each cluster's copy runs its share, the
	// other components at 0 replicas. A workload is divided only when its
	// rule marks at least one component divisible and gives every
	// component's replicasPath; otherwise it is placed whole and the
	// binding's Scheduled condition says why.
	// +kubebuilder:default=Whole
	// +optional
	Division ComponentDivision `json:"division,omitempty"`
}

// ReplicaLimits bound how large a placement may be: a template over them
// is Unschedulable and nothing reaches the members.
type ReplicaLimits struct {
	// MaxReplicas bounds a template's replicas.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// MaxReplicasPerCluster bounds the replicas one cluster gets (for
	// Duplicated, every cluster gets all of them).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxReplicasPerCluster *int32 `json:"maxReplicasPerCluster,omitempty"`
}

// ClusterAffinity selects clusters. All set fields must match; an empty
// ClusterAffinity matches every cluster.
type ClusterAffinity struct {
	// LabelSelector matches cluster labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// FieldSelector matches the cluster's provider, region or zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	// ClusterNames lists the only clusters that match.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=set
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// Exclude lists clusters that never match.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=set
	// +optional
	Exclude []string `json:"exclude,omitempty"`
}

// FieldSelector matches cluster fields.
type FieldSelector struct {
	// MatchExpressions are ANDed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	MatchExpressions []FieldSelectorRequirement `json:"matchExpressions"`
}

// FieldSelectorRequirement matches one cluster field against values.
// +kubebuilder:validation:XValidation:rule="self.operator in ['Exists', 'DoesNotExist'] ? (!has(self.values) || size(self.values) == 0) : (has(self.values) && size(self.values) > 0)",message="fieldSelector.matchExpressions[].values must be non-empty for In and NotIn and empty for Exists and DoesNotExist"
type FieldSelectorRequirement struct {
	// Key is the cluster field: provider, region or zone.
	// +kubebuilder:validation:Enum=provider;region;zone
	Key string `json:"key"`
	// Operator: In, NotIn, Exists or DoesNotExist.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values to compare with.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// Cluster field keys of a FieldSelectorRequirement.
const (
	ProviderField = "provider"
	RegionField   = "region"
	ZoneField     = "zone"
)

// ClusterAffinityTerm is one named term of the ordered fallback list.
type ClusterAffinityTerm struct {
	// AffinityName identifies the term.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// OverflowAffinities are further groups of clusters, in order, that take
	// the divided replicas the term's own clusters (and the groups before)
	// cannot hold. A cluster in several groups belongs to the first.
	// Duplicated workloads and kinds without replicas do not overflow.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// WeightedClusterAffinityTerm adds Weight to the score of matching clusters.
type WeightedClusterAffinityTerm struct {
	// Weight in -100..100, not 0.
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:XValidation:rule="self != 0",message="preferredClusterAffinities[].weight must not be 0: use -100..-1 to avoid or 1..100 to prefer"
	Weight int32 `json:"weight"`
	// Preference selects the clusters the weight applies to.
	Preference ClusterAffinity `json:"preference"`
}

// SpreadFieldValue is a cluster field to spread over.
// +kubebuilder:validation:Enum=cluster;region;zone;provider
type SpreadFieldValue string

// Spread fields.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint bounds the number of groups the chosen clusters span.
// +kubebuilder:validation:XValidation:rule="has(self.spreadByField) != has(self.spreadByLabel)",message="spreadConstraints[]: set exactly one of spreadByField and spreadByLabel"
// +kubebuilder:validation:XValidation:rule="!has(self.maxGroups) || self.minGroups <= self.maxGroups",message="spreadConstraints[]: minGroups must be less than or equal to maxGroups"
type SpreadConstraint struct {
	// SpreadByField groups clusters by cluster, region, zone or provider.
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// SpreadByLabel groups clusters by the value of this label.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// MaxGroups is the most groups the clusters may span. Unset means no limit.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxGroups *int32 `json:"maxGroups,omitempty"`

	// MinGroups is the fewest groups the clusters must span.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MinGroups int32 `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType says whether every cluster runs all replicas.
// +kubebuilder:validation:Enum=Duplicated;Divided
type ReplicaSchedulingType string

// Replica scheduling types.
const (
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	ReplicaSchedulingTypeDivided    ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference says how Divided replicas are split.
// +kubebuilder:validation:Enum=Aggregated;Weighted
type ReplicaDivisionPreference string

// Replica division preferences.
const (
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	ReplicaDivisionPreferenceWeighted   ReplicaDivisionPreference = "Weighted"
)

// DynamicWeightFactor is where dynamic weights come from.
// +kubebuilder:validation:Enum=AvailableReplicas
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weighs clusters by how many replicas fit.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// ReplicaSchedulingStrategy says how replicas are placed.
// +kubebuilder:validation:XValidation:rule="!has(self.replicaDivisionPreference) || self.replicaSchedulingType == 'Divided'",message="replicaScheduling.replicaDivisionPreference is only valid with replicaSchedulingType: Divided"
// +kubebuilder:validation:XValidation:rule="!has(self.weightPreference) || (has(self.replicaDivisionPreference) && self.replicaDivisionPreference == 'Weighted')",message="replicaScheduling.weightPreference is only valid with replicaDivisionPreference: Weighted"
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType: Duplicated or Divided.
	// +kubebuilder:default=Divided
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// ReplicaDivisionPreference: Aggregated (as few clusters as possible) or
	// Weighted (by weightPreference; every cluster weighs the same when
	// weightPreference is unset, as in Karmada). Only with Divided; Divided
	// without a preference means Weighted.
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// WeightPreference gives static or dynamic weights. Only with Weighted.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`

	// UnschedulableThresholdSeconds: replicas a member's scheduler cannot
	// place (pods Pending, PodScheduled=False, reason Unschedulable) for
	// longer than this are taken back from that member and placed on
	// clusters with room (Divided by dynamic weights or Aggregated only;
	// other placements report them). Unset: the controller manager's
	// --unschedulable-threshold (5m by default).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	// +optional
	UnschedulableThresholdSeconds *int32 `json:"unschedulableThresholdSeconds,omitempty"`
}

// ClusterPreferences gives the weights of a Weighted division.
// +kubebuilder:validation:XValidation:rule="has(self.staticWeightList) != has(self.dynamicWeight)",message="weightPreference: set exactly one of staticWeightList and dynamicWeight"
type ClusterPreferences struct {
	// StaticWeightList gives clusters fixed weights. A cluster's weight is the
	// largest weight of the rules it matches; clusters matching none get none.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// DynamicWeight weighs clusters by a dynamic factor.
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight gives matching clusters a weight.
type StaticClusterWeight struct {
	// TargetCluster selects the clusters.
	TargetCluster ClusterAffinity `json:"targetCluster"`
	// Weight is at least 1.
	// +kubebuilder:validation:Minimum=1
	Weight int64 `json:"weight"`
}
