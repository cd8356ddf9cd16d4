package v1alpha1

// This file holds the fields of a policy that govern the life of what it
// propagates rather than where it goes: who may own a member object
// (ConflictResolution), when a policy change reaches its bindings
// (ActivationPreference), holding Works back (Suspension) and where it
// goes relative to other workloads (WorkloadAffinity).

// ConflictResolution says what Shepherd does when the object it is about
// to create in a member already exists there and was not created by
// Shepherd for the same Work.
// +kubebuilder:validation:Enum=Abort;Overwrite
type ConflictResolution string

const (
	// ConflictAbort leaves the member object alone and reports the conflict
	// on the Work and the binding. The default.
	ConflictAbort ConflictResolution = "Abort"
	// ConflictOverwrite adopts the member object: Shepherd applies the
	// template over it and from then on owns it (deletes it with the
	// template unless resources are preserved).
	ConflictOverwrite ConflictResolution = "Overwrite"
)

// ActivationPreference says when a policy change reaches the bindings of
// templates the policy already governs.
// +kubebuilder:validation:Enum=Lazy
type ActivationPreference string

// LazyActivation defers a policy change for each template until that
// template changes; a template the policy newly matches is bound at once.
const LazyActivation ActivationPreference = "Lazy"

// Suspension holds Works back from members.
// +kubebuilder:validation:XValidation:rule="!(has(self.dispatching) && self.dispatching && has(self.dispatchingOnClusters))",message="spec.suspension: dispatching: true already holds every cluster; remove dispatchingOnClusters or set dispatching to false"
type Suspension struct {
	// Dispatching holds every Work of the templates: nothing is applied to
	// or deleted from members while true. Scheduling still runs.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`

	// DispatchingOnClusters holds the Works of the named clusters only.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names clusters whose Works are held.
type SuspendClusters struct {
	// ClusterNames of the held clusters.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// Suspends reports whether the Works of cluster are held.
func (s *Suspension) Suspends(cluster string) bool {
	if s == nil {
		return false
	}
	if s.Dispatching != nil && *s.Dispatching {
		return true
	}
	if s.DispatchingOnClusters == nil {
		return false
	}
	for _, c := range s.DispatchingOnClusters.ClusterNames {
		if c == cluster {
			return true
		}
	}
	return false
}

// PreemptionBehavior is Karmada's spec.preemption: Always or Never (the
// default).
// +kubebuilder:validation:Enum=Always;Never
type PreemptionBehavior string

// NamespacedPreemption is a ClusterPropagationPolicy's
// spec.namespacedPreemption: Allow (the default) or Deny.
// +kubebuilder:validation:Enum=Allow;Deny
type NamespacedPreemption string

// Whether PropagationPolicies may preempt a ClusterPropagationPolicy.
const (
	NamespacedPreemptionAllow NamespacedPreemption = "Allow"
	NamespacedPreemptionDeny  NamespacedPreemption = "Deny"
)

// Preemption behaviours.
const (
	PreemptAlways PreemptionBehavior = "Always"
	PreemptNever  PreemptionBehavior = "Never"
)

// SchedulePriority is Karmada's spec.schedulePriority: the PriorityClass
// (scheduling.k8s.io/v1, on the hub) whose value orders scheduling.
type SchedulePriority struct {
	// PriorityClassSource: KubePriorityClass.
	// +kubebuilder:validation:Enum=KubePriorityClass
	PriorityClassSource string `json:"priorityClassSource"`
	// PriorityClassName names the PriorityClass.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName"`
}

// WorkloadAffinity is Karmada's spec.placement.workloadAffinity: it
// places a workload relative to the other workloads of its group, the
// templates in its namespace carrying the same value of a template label.
// Both terms are hard requirements. docs/workload-affinity.md has the
// details.
// +kubebuilder:validation:XValidation:rule="!(has(self.affinity) && has(self.antiAffinity) && self.affinity.groupByLabelKey == self.antiAffinity.groupByLabelKey)",message="spec.placement.workloadAffinity: affinity and antiAffinity group by the same label key, so a workload would have to run with and apart from the same workloads; use a different groupByLabelKey for one of them"
type WorkloadAffinity struct {
	// Affinity keeps the workloads of a group together: once one of them
	// is placed, the others only go to the clusters every placed member
	// runs on. The first member of a group is placed freely.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`
	// AntiAffinity keeps the workloads of a group apart: a cluster running
	// another member of the group is not eligible.
	// +optional
	AntiAffinity *WorkloadAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm groups workloads by the value of a template label.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is the label key on the resource templates whose
	// value names the group: templates of one namespace with the same
	// value are one group. A template without the label is in no group and
	// is placed as if the term were not set.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="groupByLabelKey must not be empty: give the template label key that names the group, e.g. app.example.com/group"
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// OverflowClusterAffinity is one overflow group of a cluster affinity term
// (Karmada's shape): the clusters its affinity matches.
type OverflowClusterAffinity struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}
