package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Conditions of a ResourceInterpreterCustomization (besides Compiled and
// Active, shared with HealthInterpreter).
const (
	// ConditionKindFound is True when the hub serves the target kind.
	ConditionKindFound = "KindFound"

	ReasonFound    = "Found"
	ReasonNotFound = "NotFound"
)

// ResourceInterpreterCustomizationSpec teaches Shepherd one kind: where its
// replicas are, how a cluster's share is written, which pod templates it
// is made of, which status fields add up on the hub, how its health is
// judged, what it depends on and which fields member controllers own.
// Every part is optional; a part left out keeps Shepherd's built-in
// knowledge of the kind, if any.
// +kubebuilder:validation:XValidation:rule="!(self.target.apiVersion == 'v1' && self.target.kind == 'Secret' && has(self.customizations.sensitive) && !self.customizations.sensitive)",message="spec.customizations.sensitive: Secrets are always sensitive; remove sensitive: false"
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind customized.
	Target HealthTarget `json:"target"`
	// Customizations are the operations customized.
	Customizations Customizations `json:"customizations"`
}

// Customizations holds one entry per operation.
// +kubebuilder:validation:XValidation:rule="has(self.replicas) || has(self.components) || has(self.statusAggregation) || has(self.health) || has(self.dependencies) || has(self.retention) || has(self.observesGeneration) || has(self.sensitive)",message="spec.customizations: customize at least one operation (replicas, components, statusAggregation, health, dependencies, retention, observesGeneration, sensitive)"
type Customizations struct {
	// Replicas: where the kind keeps its replicas (GetReplicas) and where
	// a cluster's share is written (ReviseReplica).
	// +optional
	Replicas *ReplicaCustomization `json:"replicas,omitempty"`
	// Components: the pod templates of a kind made of several (a head and
	// workers, a driver and executors), each with its replicas and what
	// one replica needs (Karmada's componentResource, GetComponents).
	// +optional
	Components *ComponentCustomization `json:"components,omitempty"`
	// StatusAggregation: the status fields summed over members onto the
	// hub's template.
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`
	// Health judges a member's copy, as a HealthInterpreter does (a
	// HealthInterpreter of the same kind takes precedence).
	// +optional
	Health *HealthExpression `json:"health,omitempty"`
	// Dependencies lists the objects a template needs beside it
	// (propagateDeps).
	// +optional
	Dependencies *DependencyCustomization `json:"dependencies,omitempty"`
	// Retention lists the fields a member controller owns: they keep the
	// member's values on every apply.
	// +optional
	Retention *RetentionCustomization `json:"retention,omitempty"`
	// ObservesGeneration: the kind's status carries observedGeneration,
	// which the hub then reports once every member runs the template's
	// generation.
	// +optional
	ObservesGeneration *bool `json:"observesGeneration,omitempty"`
	// Sensitive: the kind's values are secret. A drift or a ReportDiff
	// difference of its objects, which the binding's and the Work's status
	// show to people who may not read the member object, then names the
	// fields and shows a hash of each value salted with the member
	// object's UID (sha256:...), never the value. Secrets are always
	// sensitive, built in: sensitive: false on a Secret is refused, and
	// false on any other kind is its default.
	// +optional
	Sensitive *bool `json:"sensitive,omitempty"`
}

// ReplicaCustomization says where the replicas are.
type ReplicaCustomization struct {
	// Expression is a CEL expression over the variable `object` (the
	// template) returning the replicas as an int, e.g.
	// `has(object.spec.replicas) ? object.spec.replicas : 1`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
	// ReplicasPath is the JSON pointer of the field a cluster's share is
	// written to, e.g. /spec/replicas.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="replicasPath must be a JSON pointer starting with '/', e.g. /spec/replicas"
	ReplicasPath string `json:"replicasPath"`
	// PodSpecPath is the JSON pointer of the pod spec one replica runs
	// (e.g. /spec/template/spec): what one replica requests is read from
	// it for the scheduler, and its ConfigMaps, Secrets, ServiceAccount and
	// PVCs are the kind's dependencies unless Dependencies says otherwise.
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="podSpecPath must be a JSON pointer starting with '/', e.g. /spec/template/spec"
	// +optional
	PodSpecPath string `json:"podSpecPath,omitempty"`
}

// ComponentCustomization lists a workload's components.
type ComponentCustomization struct {
	// Expression is a CEL expression over the variable `object` (the
	// template) returning a list of at most 32 maps, one per component, in
	// a fixed order: name (a string unique in the workload), replicas (an
	// int, 0 or more) and podSpec (the pod spec a replica runs, whose
	// requests are read as a template's), e.g.
	// `[{'name': 'head', 'replicas': 1, 'podSpec': object.spec.head.template.spec}]`.
	// A kind whose pods are sized by fields of its own may give Karmada's
	// replicaRequirements ({resourceRequest, priorityClassName}) instead
	// of podSpec. Two keys are optional: divisible (a bool: the
	// component's replicas may run in several clusters, apart from the
	// other components, when a placement's components.division is
	// DivideIndependent) and replicasPath (the JSON pointer, in the
	// template, of the integer field holding the component's replicas,
	// e.g. /spec/workerGroups/1/replicas, where each cluster's share is
	// written; it must hold the component's replicas). A workload is
	// divided only when every component has a replicasPath.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
}

// StatusAggregation names the integer fields of .status summed over members.
type StatusAggregation struct {
	// SummedFields are names of integer fields directly under .status,
	// e.g. readyReplicas.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z][a-zA-Z0-9]*$`
	// +listType=set
	SummedFields []string `json:"summedFields"`
}

// DependencyCustomization finds what a template depends on.
type DependencyCustomization struct {
	// Expression is a CEL expression over the variable `object` (the
	// template) returning a list of maps with the keys apiVersion, kind and
	// name, in the template's namespace, e.g.
	// `[{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': object.spec.configName}]`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
}

// RetentionCustomization lists member-owned fields.
type RetentionCustomization struct {
	// Paths are JSON pointers, e.g. /spec/replicas.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.all(p, p.startsWith('/'))",message="retention.paths must be JSON pointers starting with '/', e.g. /spec/replicas"
	// +listType=set
	Paths []string `json:"paths"`
}

// ResourceInterpreterCustomizationStatus reports whether the
// customization is usable.
type ResourceInterpreterCustomizationStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Compiled, KindFound, Active.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceInterpreterCustomization teaches Shepherd a kind (a CRD workload,
// or a built-in kind it should treat differently) in CEL, with no change
// to Shepherd: Karmada's ResourceInterpreterCustomization, with CEL
// compiled and type-checked at admission instead of Lua.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ric,categories=shepherd
// +kubebuilder:printcolumn:name="APIVersion",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="Compiled",type=string,JSONPath=`.status.conditions[?(@.type=="Compiled")].status`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.conditions[?(@.type=="Active")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
	// +optional
	Status ResourceInterpreterCustomizationStatus `json:"status,omitempty"`
}

// ResourceInterpreterCustomizationList is a list of customizations.
// +kubebuilder:object:root=true
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreterCustomization `json:"items"`
}
