package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{&Cluster{}, &ClusterList{}}
}

// Well-known taint keys that Shepherd's cluster status controller manages.
const (
	// TaintClusterNotReady is added when a cluster's Ready condition is False.
	TaintClusterNotReady = "cluster.shepherd.io/not-ready"
	// TaintClusterUnreachable is added when a cluster's Ready condition is Unknown
	// (the hub cannot reach its API server).
	TaintClusterUnreachable = "cluster.shepherd.io/unreachable"
)

// FinalizerCleanup on a Cluster holds its deletion until every Work of the
// cluster is gone, and with them the objects Shepherd propagated to the
// member (or released them, where resources are preserved).
const FinalizerCleanup = "cluster.shepherd.io/cleanup"

// ReasonIdentityMismatch is the Ready condition's reason when the member
// answers with an identity other than spec.id: nothing is applied to or
// deleted from it.
const ReasonIdentityMismatch = "IdentityMismatch"

// ReasonIdentityUnverified is the Ready condition's reason when the
// member's identity cannot be read: treated as a mismatch.
const ReasonIdentityUnverified = "IdentityUnverified"

// Condition types of a Cluster.
const (
	// ClusterConditionReady says whether the member's API server answers its
	// readiness probe. Unknown means the hub could not reach it.
	ClusterConditionReady = "Ready"
	// ClusterConditionAuthorized says whether the hub's credentials hold
	// the rights Works need in the member (checked every few minutes).
	ClusterConditionAuthorized = "Authorized"
	// ClusterConditionRoomTrusted says whether the room the cluster's
	// status reports (its node model, allocatable and node counts) is
	// within the cluster's spec.roomBounds: False (reason
	// ReasonRoomOutOfBounds) names the claim the scheduler ignores.
	ClusterConditionRoomTrusted = "RoomTrusted"
)

// Reasons of the RoomTrusted condition.
const (
	ReasonRoomWithinBounds = "WithinBounds"
	ReasonRoomOutOfBounds  = "OutOfBounds"
)

// SyncMode says who applies works to the member.
// +kubebuilder:validation:Enum=Push;Pull
type SyncMode string

const (
	// Push: the hub applies works to the member with the stored credentials.
	Push SyncMode = "Push"
	// Pull: an agent in the member (`shepherd agent`) pulls works from the
	// hub, applies them and reports the member's status; the hub never
	// dials the member.
	Pull SyncMode = "Pull"
)

// AgentLeaseName names the Lease, in the cluster's execution namespace
// (shepherd-es-<cluster>), that the acting agent of a Pull cluster holds
// and renews: the agents of one cluster elect their leader with it, and the
// hub judges the cluster's readiness by its renewals.
const AgentLeaseName = "shepherd-agent"

// AgentServiceAccountName names a Pull cluster's agent's ServiceAccount
// (and its Role and RoleBinding) in the cluster's execution namespace: the
// identity of its hub token, which the agent renews itself.
const AgentServiceAccountName = "shepherd-agent"

// ReasonAgentLeaseExpired is the Ready condition's reason (status Unknown)
// when the agent of a Pull cluster stopped renewing its Lease.
const ReasonAgentLeaseExpired = "AgentLeaseExpired"

// ReasonAgentNotConnected is the Ready condition's reason (status
// Unknown) when no agent of a Pull cluster has held its Lease yet.
const ReasonAgentNotConnected = "AgentNotConnected"

// ClusterSpec describes how to reach a member cluster and where it sits in the fleet.
// +kubebuilder:validation:XValidation:rule="self.syncMode == 'Pull' || has(self.apiEndpoint)",message="spec.apiEndpoint is required when spec.syncMode is Push: set it to the member's API server URL (https://host:port)"
// +kubebuilder:validation:XValidation:rule="self.syncMode == 'Pull' || has(self.secretRef)",message="spec.secretRef is required when spec.syncMode is Push: name the Secret that holds the member's credentials"
type ClusterSpec struct {
	// ID is the member's identity: the UID of its kube-system namespace,
	// recorded by `shepherd join`. The cluster status controller checks it
	// on every probe: a member that answers with another identity (the
	// endpoint or credentials now reach a different cluster) is not Ready,
	// with reason IdentityMismatch, and nothing is applied to or deleted
	// from it. Empty skips the check.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ID string `json:"id,omitempty"`

	// SyncMode says who applies works to the member: Push, the hub with the
	// credentials of secretRef; Pull, an agent in the member with its own
	// credentials for the hub (`shepherd register`, `shepherd agent`).
	// It cannot change: unjoin the cluster and join or register it again.
	// +kubebuilder:default=Push
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.syncMode cannot change: unjoin the cluster, then join (Push) or register (Pull) it again"
	// +optional
	SyncMode SyncMode `json:"syncMode,omitempty"`

	// APIEndpoint is the URL of the member's kube-apiserver.
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// SecretRef names the Secret holding the credentials for the member. The
	// Secret carries a "kubeconfig" key, or "token" and "caBundle" keys.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// InsecureSkipTLSVerification skips verifying the member's serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// Provider is the cloud provider or infrastructure owner of the member,
	// used by spread constraints and field selectors.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region of the member.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone of the member.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Zone string `json:"zone,omitempty"`

	// Taints keep workloads that do not tolerate them away from the member.
	// NoSchedule stops new placements; NoExecute also evicts existing ones.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'NoExecute'])",message="spec.taints[].effect must be NoSchedule or NoExecute"
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// RoomBounds caps the room the cluster's status may report. A Pull
	// cluster's agent writes its own status, so a stolen agent token could
	// otherwise claim any room and draw replicas; a report beyond these
	// bounds is ignored (the cluster is judged to have no room) and named
	// in the RoomTrusted condition. Unset fields take the defaults.
	// +optional
	RoomBounds *RoomBounds `json:"roomBounds,omitempty"`
}

// RoomBounds caps what a cluster's status may claim.
type RoomBounds struct {
	// MaxNodes is the most nodes the cluster may report (default
	// DefaultMaxNodes, Kubernetes' documented limit).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`
	// MaxNodeRoom is the most one node may hold, per resource (cpu, memory,
	// pods, ...); a resource not named here keeps its default
	// (DefaultMaxNodeRoom). The cluster's allocatable may be at most this
	// times its Ready nodes.
	// +optional
	MaxNodeRoom corev1.ResourceList `json:"maxNodeRoom,omitempty"`
}

// DefaultMaxNodes is RoomBounds.MaxNodes when unset: 5,000 nodes,
// Kubernetes' documented largest cluster.
const DefaultMaxNodes = 5000

// DefaultMaxNodeRoom is RoomBounds.MaxNodeRoom for the resources it does
// not name: beyond the largest machines sold today.
func DefaultMaxNodeRoom() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1024"),
		corev1.ResourceMemory: resource.MustParse("32Ti"),
		corev1.ResourcePods:   resource.MustParse("1024"),
	}
}

// LocalSecretReference names a Secret in a namespace of the hub.
type LocalSecretReference struct {
	// Namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ClusterStatus is what the hub last observed of the member.
type ClusterStatus struct {
	// KubernetesVersion is the member's server version (e.g. v1.36.3).
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// APIEnablements lists the group/versions and kinds the member serves.
	// +listType=atomic
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// Conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NodeSummary counts the member's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// ResourceSummary sums the member's resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// LastProbeTime is when the member was last probed.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`
}

// APIEnablement is one group/version the member serves and its kinds.
type APIEnablement struct {
	// GroupVersion, e.g. "apps/v1" or "v1".
	GroupVersion string `json:"groupVersion"`
	// Resources served in that group/version.
	// +listType=atomic
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is one resource of an APIEnablement.
type APIResource struct {
	// Name is the plural resource name, e.g. "deployments".
	Name string `json:"name"`
	// Kind, e.g. "Deployment".
	Kind string `json:"kind"`
}

// NodeSummary counts nodes.
type NodeSummary struct {
	// TotalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`
	// ReadyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums resources over the member's nodes and pods.
type ResourceSummary struct {
	// Allocatable is the sum of the Ready nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is the sum of the requests of pods not yet bound to a node.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is the sum of the requests of pods bound to nodes and not finished.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// Nodes models the room left on each Ready, schedulable node, so that
	// how many replicas fit is counted node by node (a replica never spans
	// nodes) rather than from the sums above. Nodes with the same room form
	// one group; a member with more distinct nodes than MaxNodeGroups is
	// summarized conservatively (each group holds the least room of its
	// nodes). Empty when not reported: the sums are used alone.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Nodes []NodeGroup `json:"nodes,omitempty"`
}

// MaxNodeGroups bounds ResourceSummary.Nodes: about 10 KB of status
// whatever the member's size.
const MaxNodeGroups = 64

// NodeGroup is Count nodes, each with at least Free room left.
type NodeGroup struct {
	// Count is the number of nodes in the group.
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count"`
	// Free is a node's allocatable minus the requests of the unfinished
	// pods bound to it ("pods" as a count): the least of the group's nodes,
	// resource by resource.
	Free corev1.ResourceList `json:"free"`
}

// Cluster is a member cluster of the fleet.
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mc;mcl,categories=shepherd
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.provider`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zone`
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.apiEndpoint`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 48",message="metadata.name of a Cluster must be at most 48 characters (it prefixes the cluster's execution namespace)"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterSpec `json:"spec"`
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}
