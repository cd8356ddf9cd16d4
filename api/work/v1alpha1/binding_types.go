package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{
		&ResourceBinding{}, &ResourceBindingList{},
		&ClusterResourceBinding{}, &ClusterResourceBindingList{},
		&Work{}, &WorkList{},
	}
}

// Condition types of a binding.
const (
	// ConditionScheduled is True when the scheduler placed the binding; its
	// message holds the aggregated reason when it could not.
	ConditionScheduled = "Scheduled"
	// ConditionFullyApplied is True when every target's Work was applied.
	ConditionFullyApplied = "FullyApplied"
	// ReasonUnschedulable is the Scheduled condition's reason when no
	// placement fits: the binding keeps the placement it had. Readers
	// other than the scheduler (the FederatedHPA) act on it.
	ReasonUnschedulable = "Unschedulable"
)

// MaxSchedulingDecisions caps status.schedulingDecisions so a binding over a
// large fleet stays small; the selected clusters are always kept first.
// Every status write of the binding (the scheduler's, and the aggregation
// of its members' status after it) stores and re-validates the whole list,
// so it is kept to what explains a placement: the selected clusters, the
// best of the others and why they lost. `shepherd plan --explain` explains every
// cluster.
const MaxSchedulingDecisions = 16

// TargetState is where a target cluster is in its life cycle (the batch
// semantics of a fleet scheduler).
// +kubebuilder:validation:Enum=Scheduled;Bound;Unscheduled
type TargetState string

// Target states.
const (
	// TargetScheduled: the scheduler picked the cluster; no Work applied yet.
	TargetScheduled TargetState = "Scheduled"
	// TargetBound: the cluster's Work exists and was applied.
	TargetBound TargetState = "Bound"
	// TargetUnscheduled: the cluster left the placement; its Work and member
	// objects are being removed, after which the target disappears.
	TargetUnscheduled TargetState = "Unscheduled"
)

// ObjectReference identifies the resource template a binding places. The
// object it names (group, kind, namespace, name) cannot change once the
// binding exists: a binding places the template it is named for, and only
// that one.
// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind && self.name == oldSelf.name && has(self.__namespace__) == has(oldSelf.__namespace__) && (!has(self.__namespace__) || self.__namespace__ == oldSelf.__namespace__) && self.apiVersion.contains('/') == oldSelf.apiVersion.contains('/') && (!self.apiVersion.contains('/') || self.apiVersion.split('/')[0] == oldSelf.apiVersion.split('/')[0])",message="spec.resource names the template the binding places and cannot be changed: group, kind, namespace and name are fixed at creation (delete the template or its policy instead)"
type ObjectReference struct {
	// APIVersion of the template.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the template.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Namespace of the template; empty for cluster-scoped templates.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the template.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// UID of the template: the binding controller places the template only
	// while its UID is this one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID string `json:"uid"`
	// ResourceVersion of the template last seen.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// PolicyReference names the policy that produced a binding.
type PolicyReference struct {
	// Kind: PropagationPolicy or ClusterPropagationPolicy.
	// +kubebuilder:validation:Enum=PropagationPolicy;ClusterPropagationPolicy
	Kind string `json:"kind"`
	// Namespace of a PropagationPolicy.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the policy.
	Name string `json:"name"`
}

// ReplicaRequirements is what one replica needs.
type ReplicaRequirements struct {
	// ResourceRequest is one replica's resource request.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// PriorityClassName of the pod template.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// TargetCluster is one cluster of a placement and its replicas.
type TargetCluster struct {
	// Name of the cluster.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Replicas on the cluster (for Duplicated, the workload's replicas).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// State: Scheduled, Bound or Unscheduled. Empty means Scheduled.
	// +optional
	State TargetState `json:"state,omitempty"`
	// Components are the components of a workload made of several pod
	// templates (spec.components) placed on the cluster, each with its
	// replicas there, in the order of spec.components. A workload placed
	// whole lists every replica of every component on each cluster; one
	// whose components the scheduler divided (spec.dividedComponents)
	// lists on the head cluster the components that are not divisible,
	// with all their replicas, and on each cluster its share of the
	// divisible ones: a component it does not list runs 0 replicas there.
	// Empty for every other workload.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Components []TargetComponent `json:"components,omitempty"`
}

// TargetComponent is one component's replicas on one target cluster.
type TargetComponent struct {
	// Name of the component, as in spec.components[].name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Replicas of the component on the cluster.
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`
}

// Component is one pod template of a workload made of several (a
// RayCluster's head and worker groups, a Spark driver and its executors):
// its name, how many pods run it and what one of them needs, as the
// resource interpreter reads them from the template.
type Component struct {
	// Name of the component, unique in the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Replicas is how many pods run the component's template.
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`
	// ReplicaRequirements is what one of those pods needs.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
	// Divisible: the component's replicas may run in several clusters,
	// apart from the other components, as the kind's components rule says.
	// A placement whose components.division is DivideIndependent divides
	// them over clusters when every component has a ReplicasPath.
	// +optional
	Divisible bool `json:"divisible,omitempty"`
	// ReplicasPath is the JSON pointer, in the template, of the integer
	// field holding the component's replicas (e.g.
	// /spec/workerGroups/1/replicas), as the kind's components rule gives
	// it: the binding controller writes each cluster's share there when
	// the components are divided.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ReplicasPath string `json:"replicasPath,omitempty"`
}

// DividedComponents records that the scheduler divided a workload's
// divisible components over clusters.
type DividedComponents struct {
	// HeadCluster is the cluster that runs the components that are not
	// divisible, whole; empty when every component is divisible.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	HeadCluster string `json:"headCluster,omitempty"`
}

// ComponentReplicaRequirements is what one pod of a component needs.
type ComponentReplicaRequirements struct {
	// ResourceRequest is one pod's resource request.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// PriorityClassName of the component's pod template.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// GracefulEvictionTask keeps a copy on an evicted cluster until it may go.
type GracefulEvictionTask struct {
	// FromCluster is the evicted cluster.
	FromCluster string `json:"fromCluster"`
	// Replicas the cluster had when evicted.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Reason of the eviction, e.g. ApplicationFailure or TaintUntolerated.
	Reason string `json:"reason"`
	// Message for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// Producer is the controller that created the task.
	Producer string `json:"producer"`
	// PurgeMode of the old copy.
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode"`
	// GracePeriodSeconds for a Graciously purged copy.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// Confirmed is set by a user (or `shepherd failover confirm`) to let a
	// PurgeMode Never copy go.
	// +optional
	Confirmed bool `json:"confirmed,omitempty"`
	// CreationTimestamp is when the cluster was evicted.
	CreationTimestamp metav1.Time `json:"creationTimestamp"`
}

// EvictionHistoryEntry records that a cluster was evicted, so the scheduler
// keeps it out for the policy's block-predecessor window.
type EvictionHistoryEntry struct {
	// ClusterName of the evicted cluster.
	ClusterName string `json:"clusterName"`
	// EvictedAt is when it was evicted.
	EvictedAt metav1.Time `json:"evictedAt"`
	// Reason of the eviction.
	Reason string `json:"reason"`
	// Message for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// PreservedLabelState holds the labels the failover's state preservation
	// read from the evicted copy's status, to set on the copy replacing it.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`
	// ClustersBeforeFailover are the active targets when the cluster was
	// evicted: the preserved labels go only to clusters not among them.
	// +listType=atomic
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`
}

// BindingSpec is the spec shared by ResourceBinding and ClusterResourceBinding.
type BindingSpec struct {
	// Resource is the template placed.
	Resource ObjectReference `json:"resource"`

	// PolicyRef names the policy the binding follows.
	// +optional
	PolicyRef *PolicyReference `json:"policyRef,omitempty"`

	// Replicas the template asks for; 0 for kinds without replicas.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReplicaRequirements is what one replica needs.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Components are the pod templates of a workload made of several (a
	// RayCluster's head and worker groups, a TFJob's chief, workers and
	// parameter servers), in the order the resource interpreter lists
	// them; empty for kinds it reads no components of. The scheduler
	// places such a workload whole, only on clusters whose nodes hold
	// every replica of every component, unless its placement divides its
	// divisible components (placement.components.division).
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Components []Component `json:"components,omitempty"`

	// Placement in force, copied from the policy; a change reschedules.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// Failover behaviour copied from the policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// PropagateDeps copied from the policy.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// SchedulerName copied from the policy.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// ConflictResolution copied from the policy; empty means Abort.
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// ApplyStrategy copied from the policy.
	// +optional
	ApplyStrategy *policyv1alpha1.ApplyStrategy `json:"applyStrategy,omitempty"`

	// Suspension copied from the policy.
	// +optional
	Suspension *policyv1alpha1.Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion copied from the policy.
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`

	// RequiredBy lists the bindings whose workloads depend on this binding's
	// object (propagateDeps), each with the clusters it runs on: the object
	// is propagated to those clusters too. A binding that no policy governs
	// and that only dependents require (an "attached" binding, without
	// spec.policyRef) is written and deleted by the dependencies controller.
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// SchedulePriority is the value of the PriorityClass the policy's
	// spec.schedulePriority names, resolved when the binding was written:
	// with a backlog, the scheduler takes bindings of higher priority first.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// Rollout copied from the policy: how a change reaches the clusters.
	// +optional
	Rollout *policyv1alpha1.RolloutStrategy `json:"rollout,omitempty"`

	// WorkloadAffinityGroups are the groups of the placement's
	// workloadAffinity this binding's template belongs to, resolved from
	// the template's labels by the detector. The scheduler places the
	// binding with (affinity) or apart from (antiAffinity) the other
	// ResourceBindings of its namespace in the same group. Only
	// ResourceBindings carry it: groups never cross namespaces, so a
	// cluster-scoped template is in none.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`

	// RolloutControl holds what users decide about the binding's rollout
	// (`shepherd rollout pause|resume|approve|undo`): the detector never
	// writes it.
	// +optional
	RolloutControl *RolloutControl `json:"rolloutControl,omitempty"`

	// DividedComponents is set by the scheduler, in the same write as
	// spec.clusters, when it divided the workload's divisible components
	// over clusters (placement.components.division DivideIndependent):
	// each cluster's copy then runs only the replicas its
	// spec.clusters[].components list, every other component at 0. Nil
	// when the workload is placed whole.
	// +optional
	DividedComponents *DividedComponents `json:"dividedComponents,omitempty"`

	// Clusters are the targets and their replicas.
	// +kubebuilder:validation:MaxItems=5000
	// +listType=map
	// +listMapKey=name
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// RescheduleTriggeredAt asks the scheduler to recompute from scratch when
	// it is later than status.lastScheduledTime. A time rather than a boolean,
	// so that two tasks and the scheduler's own write cannot race.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// GracefulEvictionTasks keep copies on evicted clusters until they may go.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=fromCluster
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// EvictionHistory lists evicted clusters.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	EvictionHistory []EvictionHistoryEntry `json:"evictionHistory,omitempty"`
}

// WorkloadAffinityGroups names a binding's workload affinity groups, each
// as "<labelKey>=<labelValue>" of the template label that puts the
// template in it (e.g. "app.example.com/group=checkout"), as Karmada
// writes them. An empty name means no group for that term.
type WorkloadAffinityGroups struct {
	// AffinityGroup is the group the workload runs together with.
	// +kubebuilder:validation:MaxLength=381
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`
	// AntiAffinityGroup is the group the workload runs apart from.
	// +kubebuilder:validation:MaxLength=381
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ClusterDecision explains one cluster's fate in the last scheduling.
type ClusterDecision struct {
	// ClusterName of the cluster.
	ClusterName string `json:"clusterName"`
	// Selected is true when the cluster received the workload.
	Selected bool `json:"selected"`
	// Scores per score plugin (0..100 each, before weights).
	// +listType=atomic
	// +optional
	Scores []PluginScore `json:"scores,omitempty"`
	// TotalScore is the weighted sum of Scores.
	// +optional
	TotalScore int64 `json:"totalScore,omitempty"`
	// Reason says why it was filtered out, or selected, or not selected.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// PluginScore is one score plugin's normalized score.
type PluginScore struct {
	Plugin string `json:"plugin"`
	Score  int64  `json:"score"`
}

// AggregatedStatusItem is the status of the template's copy on one cluster.
type AggregatedStatusItem struct {
	// ClusterName of the member.
	ClusterName string `json:"clusterName"`
	// Applied is true when the copy was applied.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// AppliedMessage holds the apply error, if any.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`
	// AppliedReason is the reason of the Work's Applied condition when it is
	// not applied, e.g. Conflict: a member object Shepherd does not own is
	// in the way.
	// +optional
	AppliedReason string `json:"appliedReason,omitempty"`
	// Health of the copy.
	// +optional
	Health policyv1alpha1.ResourceHealth `json:"health,omitempty"`
	// HealthReason says why Health is Unknown (see the Work's
	// manifestStatuses[].healthReason).
	// +optional
	HealthReason string `json:"healthReason,omitempty"`
	// Status is the copy's raw status.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// FirstCollectedTime is when the hub first collected the copy's status
	// (the start of failover's delaySeconds).
	// +optional
	FirstCollectedTime *metav1.Time `json:"firstCollectedTime,omitempty"`
	// StatusTime is when the copy's status last changed, on the clock of
	// the process that reports the cluster (its Work's statusTime: the hub
	// for a Push cluster, the agent for a Pull one; the hub's time of
	// aggregation when the Work has none). The scheduler counts the
	// replicas the member reports (status.replicas) as part of the
	// cluster's resource summary once that summary, stamped by the same
	// clock, is later than this; until then they are in flight (see the
	// scheduling documentation, "Replicas in flight"). A Pull agent's clock
	// off from the hub's thus never makes room count twice.
	// +optional
	StatusTime *metav1.Time `json:"statusTime,omitempty"`
	// Settled is true once the copy has been Healthy.
	// +optional
	Settled bool `json:"settled,omitempty"`
	// UnhealthySince is when the copy last turned Unhealthy; cleared when it
	// is not Unhealthy. Kept in the API so a restart does not reset the clock.
	// +optional
	UnhealthySince *metav1.Time `json:"unhealthySince,omitempty"`
	// UnschedulableReplicas is how many of the copy's pods the member's
	// scheduler cannot place (from the Work's manifest status).
	// +optional
	UnschedulableReplicas int32 `json:"unschedulableReplicas,omitempty"`
	// UnschedulableSince is when the oldest of them became unschedulable.
	// +optional
	UnschedulableSince *metav1.Time `json:"unschedulableSince,omitempty"`
	// UnschedulableComponents say which components of a workload made of
	// several pod templates those pods belong to (from the Work's
	// manifest status).
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	UnschedulableComponents []UnschedulableComponent `json:"unschedulableComponents,omitempty"`
	// Drifted is true while fields Shepherd applied to the copy were
	// changed in the member (the Work's Drifted condition); DriftMessage
	// says which.
	// +optional
	Drifted bool `json:"drifted,omitempty"`
	// DriftMessage is the Work's Drifted message.
	// +optional
	DriftMessage string `json:"driftMessage,omitempty"`
}

// BindingStatus is the status shared by both binding kinds.
type BindingStatus struct {
	// ObservedGeneration is the generation the scheduler last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastScheduledTime is when the scheduler last wrote a placement.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`
	// ObservedAffinityName is the fallback affinity term in force.
	// +optional
	ObservedAffinityName string `json:"observedAffinityName,omitempty"`
	// Conditions: Scheduled, FullyApplied.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// SchedulingDecisions explain the clusters' fate, selected first, then
	// the best of the others, capped at MaxSchedulingDecisions entries.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	SchedulingDecisions []ClusterDecision `json:"schedulingDecisions,omitempty"`
	// Rollout is where the binding's rollout stands, all of it kept here
	// so that a restarted controller carries on where it was.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
	// AggregatedStatus per member.
	// +listType=map
	// +listMapKey=clusterName
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// ResourceBinding places one namespaced template.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rb,categories=shepherd
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resource.kind`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=`.spec.clusters[*].name`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="Rollout",type=string,JSONPath=`.status.rollout.phase`,priority=1
// +kubebuilder:printcolumn:name="Head",type=string,JSONPath=`.spec.dividedComponents.headCluster`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BindingSpec `json:"spec"`
	// Status is written by Shepherd's controllers alone, and stored without
	// a schema: validating it cost two fifths of every status write, the
	// hub's most frequent write (see docs/performance.md). The Go type
	// above is its schema for readers.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Status BindingStatus `json:"status,omitempty"`
}

// ResourceBindingList is a list of ResourceBindings.
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// ClusterResourceBinding places one cluster-scoped template (a namespaced
// template selected by a ClusterPropagationPolicy gets a ResourceBinding in
// its namespace).
// +kubebuilder:validation:XValidation:rule="!has(self.spec.resource.__namespace__) || size(self.spec.resource.__namespace__) == 0",message="spec.resource.namespace must be empty: a ClusterResourceBinding places only a cluster-scoped template"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=crb,categories=shepherd
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resource.kind`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=`.spec.clusters[*].name`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="Rollout",type=string,JSONPath=`.status.rollout.phase`,priority=1
// +kubebuilder:printcolumn:name="Head",type=string,JSONPath=`.spec.dividedComponents.headCluster`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BindingSpec `json:"spec"`
	// Status is written by Shepherd's controllers alone, and stored without
	// a schema: validating it cost two fifths of every status write, the
	// hub's most frequent write (see docs/performance.md). The Go type
	// above is its schema for readers.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Status BindingStatus `json:"status,omitempty"`
}

// ClusterResourceBindingList is a list of ClusterResourceBindings.
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}

// BindingObject is implemented by both binding kinds so the scheduler and
// controllers serve them through one generic code path.
// +kubebuilder:object:generate=false
type BindingObject interface {
	metav1.Object
	runtime.Object
	GetBindingSpec() *BindingSpec
	GetBindingStatus() *BindingStatus
}

// GetBindingSpec returns the binding's spec.
func (b *ResourceBinding) GetBindingSpec() *BindingSpec { return &b.Spec }

// GetBindingStatus returns the binding's status.
func (b *ResourceBinding) GetBindingStatus() *BindingStatus { return &b.Status }

// GetBindingSpec returns the binding's spec.
func (b *ClusterResourceBinding) GetBindingSpec() *BindingSpec { return &b.Spec }

// GetBindingStatus returns the binding's status.
func (b *ClusterResourceBinding) GetBindingStatus() *BindingStatus { return &b.Status }

// SchedulePriority is Karmada's binding spec.schedulePriority.
type SchedulePriority struct {
	// Priority: higher is scheduled first. Bindings without one count as 0.
	Priority int32 `json:"priority"`
}

// PriorityOf is b's scheduling priority: 0 without spec.schedulePriority.
func PriorityOf(spec *BindingSpec) int32 {
	if spec.SchedulePriority == nil {
		return 0
	}
	return spec.SchedulePriority.Priority
}

// BindingSnapshot is a dependent binding and the clusters it needs this
// binding's object in (Karmada's shape).
type BindingSnapshot struct {
	// Namespace of the dependent binding.
	Namespace string `json:"namespace"`
	// Name of the dependent binding.
	Name string `json:"name"`
	// Clusters the dependent runs on.
	// +kubebuilder:validation:MaxItems=5000
	// +listType=atomic
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Attached reports whether a binding exists only because dependents require
// its object: no policy governs it.
func Attached(spec *BindingSpec) bool { return spec.PolicyRef == nil && len(spec.RequiredBy) > 0 }
