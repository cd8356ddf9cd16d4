package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{
		&PropagationPolicy{}, &PropagationPolicyList{},
		&ClusterPropagationPolicy{}, &ClusterPropagationPolicyList{},
		&OverridePolicy{}, &OverridePolicyList{},
		&ClusterOverridePolicy{}, &ClusterOverridePolicyList{},
	}
}

// PropagationSpec is the spec shared by PropagationPolicy and
// ClusterPropagationPolicy: which resource templates to propagate and where.
//
// Every field of Karmada's PropagationPolicy (v1.18) is in the schema, so
// that the API server never prunes one silently; the fields Shepherd does
// not implement yet are refused with a message naming them.
// +kubebuilder:validation:XValidation:rule="!has(self.association) || !self.association",message="spec.association is not supported (Karmada deprecated it for propagateDeps); remove it"
// +kubebuilder:validation:XValidation:rule="!(has(self.applyStrategy) && has(self.applyStrategy.whenToTakeOver) && self.applyStrategy.whenToTakeOver == 'IfNoDiff' && has(self.conflictResolution) && self.conflictResolution == 'Overwrite')",message="spec.applyStrategy.whenToTakeOver: IfNoDiff takes over only objects that already match, spec.conflictResolution: Overwrite takes over any object: set conflictResolution to Abort, or remove whenToTakeOver"
type PropagationSpec struct {
	// ResourceSelectors pick the resource templates this policy governs.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Priority breaks ties between policies matching the same template: a
	// selector naming the template beats a label selector, then the higher
	// priority wins, then the policy whose name sorts first.
	// +kubebuilder:default=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// Placement says where the templates go.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// PropagateDeps also propagates what the templates depend on
	// (ConfigMaps, Secrets, ServiceAccounts, PVCs referenced by pod templates).
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// Failover says how workloads move when they or their clusters fail.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// SchedulerName names the scheduler that places these templates.
	// +kubebuilder:default=default-scheduler
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// ConflictResolution says what happens when an object to propagate
	// already exists in a member and Shepherd did not create it for this
	// template: Abort (the default) leaves it untouched and reports a
	// conflict; Overwrite adopts it.
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// ApplyStrategy says how copies are written into members and what
	// happens to fields changed there (drift). See docs/drift.md.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// ActivationPreference Lazy defers policy changes for a template until
	// the template itself changes. Empty applies them at once.
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// Suspension holds the templates' Works back from all or some members.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps the member objects when the template
	// is deleted or a cluster leaves the placement; Shepherd removes its
	// labels and annotations from them so they are plainly unmanaged.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// Association is Karmada's deprecated predecessor of propagateDeps.
	// Refused when true.
	// +optional
	Association bool `json:"association,omitempty"`

	// Preemption: with Always, this policy takes over templates another
	// policy claimed when it outranks that policy (a PropagationPolicy
	// outranks any ClusterPropagationPolicy and a PropagationPolicy of lower
	// priority; a ClusterPropagationPolicy one of lower priority). With
	// Never (the default), a template stays with the policy that claimed it
	// while that policy exists and matches it.
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// NamespacedPreemption, on a ClusterPropagationPolicy, says whether a
	// PropagationPolicy with preemption: Always may take over the templates
	// this policy claimed: Allow (the default, as in Karmada) or Deny, which
	// keeps an administrator's placement, and its rollout gates, on them
	// whatever a namespace's users write. A PropagationPolicy may not set it.
	// +optional
	NamespacedPreemption NamespacedPreemption `json:"namespacedPreemption,omitempty"`

	// DependentOverrides names OverridePolicies of the policy's namespace
	// that must exist before the policy propagates a template, so that
	// overrides created together with a template apply from the first
	// rendering. A ClusterPropagationPolicy has no namespace: the names are
	// ClusterOverridePolicies then.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// Rollout says how a change of what clusters are sent reaches them:
	// all at once (the default), progressively or in stages, gated on
	// each cluster's health. See docs/rollout.md.
	// +optional
	Rollout *RolloutStrategy `json:"rollout,omitempty"`

	// SchedulePriority names the PriorityClass whose value orders the
	// scheduling of this policy's bindings when the scheduler has a backlog
	// (higher first). The PriorityClass must exist when a binding is written.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// Conflict returns the conflict resolution in force, Abort when unset.
func (s *PropagationSpec) Conflict() ConflictResolution {
	if s.ConflictResolution == "" {
		return ConflictAbort
	}
	return s.ConflictResolution
}

// ResourceSelector picks resource templates.
// +kubebuilder:validation:XValidation:rule="!(has(self.name) && has(self.labelSelector))",message="resourceSelectors[]: name and labelSelector are mutually exclusive: a name already picks one object"
type ResourceSelector struct {
	// APIVersion of the templates, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	APIVersion string `json:"apiVersion"`
	// Kind of the templates, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// Namespace of the templates. A PropagationPolicy only ever selects
	// templates of its own namespace: a selector naming another namespace
	// matches nothing (CEL cannot read metadata.namespace, so the API server
	// cannot refuse it; the detector reports it as an event on the policy).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of one template. Empty picks all templates of the kind.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector picks templates by label.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Condition types of a policy's status.
const (
	// PolicyConditionConflicted is True while the policy ties with another
	// policy of the same kind, selector strength and priority for some
	// template: the name then decides, which is rarely what was meant.
	PolicyConditionConflicted = "Conflicted"
	// PolicyConditionClustersFound is False while the placement names
	// clusters that do not exist.
	PolicyConditionClustersFound = "ClustersFound"
)

// MaxListedInStatus bounds the templates and conflicts a policy's status
// lists; the counts are always complete.
const MaxListedInStatus = 20

// PolicyStatus says what a policy governs and what stands in its way.
type PolicyStatus struct {
	// ObservedGeneration is the policy generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// MatchedTemplates counts the templates the policy governs.
	// +optional
	MatchedTemplates int32 `json:"matchedTemplates,omitempty"`
	// Templates names some of them (at most 20), "Kind namespace/name".
	// +listType=atomic
	// +optional
	Templates []string `json:"templates,omitempty"`
	// Conflicts lists templates (at most 20) that this policy and others
	// match equally well: the same kind of policy, selector strength and
	// priority. The policy whose name sorts first governs them.
	// +listType=atomic
	// +optional
	Conflicts []PolicyConflict `json:"conflicts,omitempty"`
	// UnknownClusters are cluster names the placement uses that no Cluster has.
	// +listType=atomic
	// +optional
	UnknownClusters []string `json:"unknownClusters,omitempty"`
	// Conditions: Conflicted, ClustersFound.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PolicyConflict is one template several policies match equally well.
type PolicyConflict struct {
	// Template is "Kind namespace/name".
	Template string `json:"template"`
	// GovernedBy is the policy that won the tie, "Kind namespace/name".
	GovernedBy string `json:"governedBy"`
	// Policies are all the tied policies, the winner included.
	// +listType=atomic
	Policies []string `json:"policies"`
}

// PropagationPolicy propagates templates of its own namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pp,categories=shepherd
// +kubebuilder:printcolumn:name="Replica-Scheduling",type=string,JSONPath=`.spec.placement.replicaScheduling.replicaSchedulingType`
// +kubebuilder:printcolumn:name="Conflict-Resolution",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Templates",type=integer,JSONPath=`.status.matchedTemplates`
// +kubebuilder:printcolumn:name="Conflicted",type=string,JSONPath=`.status.conditions[?(@.type=="Conflicted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.namespacedPreemption)",message="spec.namespacedPreemption is for a ClusterPropagationPolicy: it says whether PropagationPolicies may preempt it; remove it"
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PropagationSpec `json:"spec"`
	// +optional
	Status PolicyStatus `json:"status,omitempty"`
}

// PropagationPolicyList is a list of PropagationPolicies.
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PropagationPolicy `json:"items"`
}

// ClusterPropagationPolicy propagates templates of any namespace and
// cluster-scoped templates. A PropagationPolicy matching the same template wins.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cpp,categories=shepherd
// +kubebuilder:printcolumn:name="Replica-Scheduling",type=string,JSONPath=`.spec.placement.replicaScheduling.replicaSchedulingType`
// +kubebuilder:printcolumn:name="Conflict-Resolution",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Templates",type=integer,JSONPath=`.status.matchedTemplates`
// +kubebuilder:printcolumn:name="Conflicted",type=string,JSONPath=`.status.conditions[?(@.type=="Conflicted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PropagationSpec `json:"spec"`
	// +optional
	Status PolicyStatus `json:"status,omitempty"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicies.
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagationPolicy `json:"items"`
}

// PolicyObject is implemented by both policy kinds so controllers serve
// them through one generic code path.
// +kubebuilder:object:generate=false
type PolicyObject interface {
	metav1.Object
	runtime.Object
	GetPropagationSpec() *PropagationSpec
	GetPolicyStatus() *PolicyStatus
}

// GetPropagationSpec returns the policy's spec.
func (p *PropagationPolicy) GetPropagationSpec() *PropagationSpec { return &p.Spec }

// GetPropagationSpec returns the policy's spec.
func (p *ClusterPropagationPolicy) GetPropagationSpec() *PropagationSpec { return &p.Spec }

// GetPolicyStatus returns the policy's status.
func (p *PropagationPolicy) GetPolicyStatus() *PolicyStatus { return &p.Status }

// GetPolicyStatus returns the policy's status.
func (p *ClusterPropagationPolicy) GetPolicyStatus() *PolicyStatus { return &p.Status }
