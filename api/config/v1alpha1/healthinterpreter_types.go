package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Condition types and reasons of a HealthInterpreter.
const (
	// ConditionCompiled is True when spec.health.expression compiled; when
	// False its message holds the CEL compiler's error.
	ConditionCompiled = "Compiled"
	// ConditionActive is True when the interpreter is the one in use for
	// its target kind: compiled, and not superseded by another
	// HealthInterpreter of the same kind that sorts first by name.
	ConditionActive = "Active"

	ReasonCompiled     = "Compiled"
	ReasonCompileError = "CompileError"
	ReasonInUse        = "InUse"
	ReasonSuperseded   = "Superseded"
	ReasonDeleting     = "Deleting"
)

// HealthTarget names the kind of member objects an interpreter judges.
type HealthTarget struct {
	// APIVersion of the kind, e.g. apps/v1 or v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// Kind, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
}

// GroupVersionKind of the target; an apiVersion that does not parse (the
// webhook refuses it) gives an empty group and version.
func (t HealthTarget) GroupVersionKind() schema.GroupVersionKind {
	gv, _ := schema.ParseGroupVersion(t.APIVersion)
	return gv.WithKind(t.Kind)
}

// HealthExpression is the rule that judges one object.
type HealthExpression struct {
	// Expression is a CEL expression over the variable observedObj (the
	// object as the member returns it: metadata, spec, status). It returns
	// the string "Healthy", "Unhealthy" or "Unknown", or a bool (true means
	// Healthy, false Unhealthy). A runtime error (e.g. a missing field)
	// makes the object Unknown, and Unknown never triggers failover; use
	// has() to test optional fields.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression"`
}

// HealthInterpreterSpec says how to judge the health of one kind.
type HealthInterpreterSpec struct {
	// Target is the kind judged; it replaces a built-in interpreter of the
	// same kind.
	Target HealthTarget `json:"target"`
	// Health is the rule.
	Health HealthExpression `json:"health"`
}

// HealthInterpreterStatus reports whether the rule is usable.
type HealthInterpreterStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Compiled, Active.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HealthInterpreter defines, in CEL, when member objects of one kind are
// Healthy, Unhealthy or Unknown; application failover acts on that health.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=hi,categories=shepherd
// +kubebuilder:printcolumn:name="APIVersion",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="Compiled",type=string,JSONPath=`.status.conditions[?(@.type=="Compiled")].status`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.conditions[?(@.type=="Active")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HealthInterpreter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HealthInterpreterSpec `json:"spec"`
	// +optional
	Status HealthInterpreterStatus `json:"status,omitempty"`
}

// HealthInterpreterList is a list of HealthInterpreters.
// +kubebuilder:object:root=true
type HealthInterpreterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HealthInterpreter `json:"items"`
}
