package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

func knownTypes() []runtime.Object {
	return []runtime.Object{&ExportedService{}, &ExportedServiceList{}}
}

// An ExportedService is one member's export of one Service, as that member
// sees it: the Service's shape and its endpoints. It lives in the member's
// execution namespace on the hub and is written by whoever reads the member:
// the controller manager for a Push member, the member's agent for a Pull
// member (which writes nowhere else). The hub merges the ExportedServices of
// one namespace and name into the ServiceImport every member of the
// ClusterSet receives, and reports the merge (conflicts, readiness) in
// status, which the writer copies to the member's ServiceExport.
type ExportedServiceSpec struct {
	// Cluster is the exporting member.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Cluster string `json:"cluster"`
	// Namespace and Name are the exported Service's in the member (and the
	// ServiceImport's in every member: namespace sameness).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// ExportedAt is the ServiceExport's creation time in the member: the
	// oldest export wins a conflict.
	ExportedAt metav1.Time `json:"exportedAt"`
	// Type is Headless for a Service without a cluster IP, ClusterSetIP
	// otherwise.
	// +kubebuilder:validation:Enum=ClusterSetIP;Headless
	Type mcsv1beta1.ServiceImportType `json:"type"`
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Ports []mcsv1beta1.ServicePort `json:"ports,omitempty"`
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxItems=2
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
	// +optional
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
	// ExportedLabels and ExportedAnnotations are the ServiceExport's: they
	// go onto the ServiceImport.
	// +optional
	ExportedLabels map[string]string `json:"exportedLabels,omitempty"`
	// +optional
	ExportedAnnotations map[string]string `json:"exportedAnnotations,omitempty"`
	// EndpointSlices are the Service's endpoints in the member, one entry
	// per EndpointSlice, in name order.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	EndpointSlices []ExportedEndpointSlice `json:"endpointSlices,omitempty"`
}

// An ExportedEndpointSlice is one EndpointSlice of an exported Service.
type ExportedEndpointSlice struct {
	// Name is the slice's name in the member.
	Name        string                     `json:"name"`
	AddressType discoveryv1.AddressType    `json:"addressType"`
	Endpoints   []discoveryv1.Endpoint     `json:"endpoints,omitempty"`
	Ports       []discoveryv1.EndpointPort `json:"ports,omitempty"`
}

// AnnotationPropertiesGeneration on an ExportedService is the generation
// at which what the hub merges last changed: everything of the spec but
// its endpoints. A verdict the hub made at that generation or later still
// holds while only endpoints changed since, so the member's ServiceExport
// keeps it instead of going back to Pending at every endpoint change. The
// writer of the ExportedService sets it.
const AnnotationPropertiesGeneration = "multicluster.shepherd.io/properties-generation"

// Condition types of an ExportedService, the ServiceExport's own.
const (
	// ConditionConflict is True when this export disagrees with the one
	// that decided a property of the ServiceImport; the reason names the
	// property, as the MCS API's ServiceExport reasons do.
	ConditionConflict = string(mcsv1beta1.ServiceExportConditionConflict)
	// ConditionReady is True once the export is part of the ServiceImport
	// the ClusterSet receives.
	ConditionReady = string(mcsv1beta1.ServiceExportConditionReady)
)

// ExportedServiceStatus is the hub's verdict on one export.
type ExportedServiceStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=expsvc,categories=shepherd
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Conflict",type=string,JSONPath=`.status.conditions[?(@.type=="Conflict")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ExportedService is one member's export of one Service (see
// ExportedServiceSpec).
type ExportedService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExportedServiceSpec   `json:"spec"`
	Status ExportedServiceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ExportedServiceList is a list of ExportedServices.
type ExportedServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExportedService `json:"items"`
}

// ExportedServiceName is the name of a member's ExportedService for the
// Service namespace/name in its execution namespace: both are DNS labels, so
// the dot keeps every pair apart.
func ExportedServiceName(namespace, name string) string { return namespace + "." + name }
