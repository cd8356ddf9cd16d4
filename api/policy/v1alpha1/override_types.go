package v1alpha1

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file holds OverridePolicy and ClusterOverridePolicy: what changes a
// resource template gets on its way to particular member clusters (another
// image registry in one region, more replicas in a bigger cluster, a label
// per environment). The shape and field names are Karmada's (v1.18), so a
// Karmada override policy works after changing its apiVersion; the rules
// Karmada checks in its webhook are CEL rules here, so the API server refuses
// a bad policy with a message naming the field. The engine applying them is
// pkg/overrides, which documents the order in which policies apply.
//
// One check cannot be CEL: whether a plaintext or fieldOverrider operation
// has a value. A value is arbitrary JSON, which CEL rules cannot see, so
// pkg/overrides refuses an add or replace without one when it renders.

// Kinds of the propagation policies, as a binding's spec.policyRef.kind
// and its LabelPolicyKind name them.
const (
	KindPropagationPolicy        = "PropagationPolicy"
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
)

// Bounds of what one override policy may ask of every rendering: each of
// its operations is applied to the template for every cluster it targets,
// every time the template, the policy or the cluster changes.
const (
	// MaxOverrideOperations bounds the operations of one policy (every
	// entry of every overrider list, and every json and yaml operation of
	// a fieldOverrider), checked when the policy is written (the
	// shepherd-overrides admission policy).
	MaxOverrideOperations = 200
	// MaxOverrideValueBytes bounds one operation's value, as JSON, and
	// MaxOverrideValueDepth how deeply it nests: JSON values are
	// schemaless, so rendering checks them (OverrideFailed).
	MaxOverrideValueBytes = 64 << 10
	MaxOverrideValueDepth = 32
)

// Kinds of the override policies, as Applied and Error of pkg/overrides name them.
const (
	KindOverridePolicy        = "OverridePolicy"
	KindClusterOverridePolicy = "ClusterOverridePolicy"
)

// OverrideSpec is the spec shared by OverridePolicy and ClusterOverridePolicy.
// +kubebuilder:validation:XValidation:rule="!has(self.overrideRules) || size(self.overrideRules) == 0 || (!has(self.targetCluster) && !(has(self.overriders) && ((has(self.overriders.plaintext) && size(self.overriders.plaintext) > 0) || (has(self.overriders.imageOverrider) && size(self.overriders.imageOverrider) > 0) || (has(self.overriders.commandOverrider) && size(self.overriders.commandOverrider) > 0) || (has(self.overriders.argsOverrider) && size(self.overriders.argsOverrider) > 0) || (has(self.overriders.labelsOverrider) && size(self.overriders.labelsOverrider) > 0) || (has(self.overriders.annotationsOverrider) && size(self.overriders.annotationsOverrider) > 0) || (has(self.overriders.fieldOverrider) && size(self.overriders.fieldOverrider) > 0))))",message="spec.targetCluster and spec.overriders (deprecated) may not be combined with spec.overrideRules: move them into an entry of spec.overrideRules"
type OverrideSpec struct {
	// ResourceSelectors pick the resource templates the policy changes.
	// Empty selects every template (of the policy's namespace for an
	// OverridePolicy).
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules are applied in order; each applies to the clusters its
	// targetCluster matches.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster restricts the deprecated spec.overriders to the matching
	// clusters; nil matches every cluster.
	//
	// Deprecated: Karmada deprecated it in v1.0; use overrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders apply to the clusters spec.targetCluster matches.
	//
	// Deprecated: Karmada deprecated it in v1.0; use overrideRules.
	// +optional
	Overriders Overriders `json:"overriders"`
}

// RuleWithCluster is one override rule: overriders and the clusters they
// apply to.
// +kubebuilder:validation:XValidation:rule="(has(self.overriders.plaintext) && size(self.overriders.plaintext) > 0) || (has(self.overriders.imageOverrider) && size(self.overriders.imageOverrider) > 0) || (has(self.overriders.commandOverrider) && size(self.overriders.commandOverrider) > 0) || (has(self.overriders.argsOverrider) && size(self.overriders.argsOverrider) > 0) || (has(self.overriders.labelsOverrider) && size(self.overriders.labelsOverrider) > 0) || (has(self.overriders.annotationsOverrider) && size(self.overriders.annotationsOverrider) > 0) || (has(self.overriders.fieldOverrider) && size(self.overriders.fieldOverrider) > 0)",message="overrideRules[].overriders is empty: add at least one of plaintext, imageOverrider, commandOverrider, argsOverrider, labelsOverrider, annotationsOverrider and fieldOverrider, or remove the rule"
type RuleWithCluster struct {
	// TargetCluster selects the clusters the rule applies to; nil matches
	// every cluster.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders change the template.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the ways to change a template. Within one rule they apply
// in this order, whatever the order of the fields in the manifest:
// imageOverrider, commandOverrider, argsOverrider, labelsOverrider,
// annotationsOverrider, fieldOverrider, plaintext (Karmada's order).
type Overriders struct {
	// Plaintext are JSON patch operations on the whole object.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`

	// ImageOverrider changes a part of container images.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`

	// CommandOverrider changes the command of a container.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`

	// ArgsOverrider changes the args of a container.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`

	// LabelsOverrider changes metadata.labels.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`

	// AnnotationsOverrider changes metadata.annotations.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`

	// FieldOverrider patches a JSON or YAML document held in a string field,
	// such as a key of a ConfigMap's data.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is an operation of an overrider.
type OverriderOperator string

// The operators of overriders.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one JSON patch (RFC 6902) operation on the object.
// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="plaintext[].path must be a JSON pointer starting with '/', e.g. /spec/replicas",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule="!(self.path == '/metadata' || ['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace', '/metadata/generateName', '/metadata/uid', '/metadata/resourceVersion', '/metadata/ownerReferences', '/metadata/finalizers'].exists(p, self.path == p || self.path.startsWith(p + '/')))",message="plaintext[].path may not touch what the object is (/apiVersion, /kind) or which object it is (/metadata as a whole, or its name, namespace, generateName, uid, resourceVersion, ownerReferences or finalizers): Shepherd keeps the object's identity as the template has it; target another field, e.g. /metadata/labels/<key>",fieldPath=".path"
type PlaintextOverrider struct {
	// Path is a JSON pointer (RFC 6901) to the field, e.g. /spec/replicas.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`
	// Operator is add, remove or replace, as in JSON patch.
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`
	// Value to add or replace with; required for add and replace, not
	// allowed for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageComponent is a part of an image reference
// [registry/]repository[:tag][@digest].
type ImageComponent string

// The components of an image reference.
const (
	// Registry is the host, with its port if any: registry.k8s.io,
	// fictional.registry.example:10443.
	Registry ImageComponent = "Registry"
	// Repository is the path after the registry: nginx, library/nginx.
	Repository ImageComponent = "Repository"
	// Tag is the tag, or the digest when the image has no tag: v1.2.3,
	// sha256:<hex>.
	Tag ImageComponent = "Tag"
)

// ImageOverrider changes one component of container images.
// +kubebuilder:validation:XValidation:rule="self.operator == 'remove' || (has(self.value) && size(self.value) > 0)",message="imageOverrider[].value is required unless operator is remove: set the registry, repository or tag to add or replace",fieldPath=".value"
type ImageOverrider struct {
	// Predicate names the one image field to change. Without it, every
	// container and init container image of a Pod, Deployment, ReplicaSet,
	// StatefulSet, DaemonSet, Job or CronJob is changed; other kinds need
	// a predicate.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// Component is the part of the image to change.
	// +kubebuilder:validation:Enum=Registry;Repository;Tag
	Component ImageComponent `json:"component"`

	// Operator: add appends value to the component, replace sets it, and
	// remove clears it.
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// Value to add or replace with; ignored for remove.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate picks one image field.
// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="imageOverrider[].predicate.path must be a JSON pointer starting with '/', e.g. /spec/template/spec/containers/0/image",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule="!(self.path == '/metadata' || ['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace', '/metadata/generateName', '/metadata/uid', '/metadata/resourceVersion', '/metadata/ownerReferences', '/metadata/finalizers'].exists(p, self.path == p || self.path.startsWith(p + '/')))",message="imageOverrider[].predicate.path may not touch what the object is (/apiVersion, /kind) or which object it is (/metadata as a whole, or its name, namespace, generateName, uid, resourceVersion, ownerReferences or finalizers): Shepherd keeps the object's identity as the template has it; target another field, e.g. /metadata/labels/<key>",fieldPath=".path"
type ImagePredicate struct {
	// Path is a JSON pointer (RFC 6901) to a string holding an image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`
}

// CommandArgsOverrider changes the command or args of one container.
type CommandArgsOverrider struct {
	// ContainerName names the container (or init container).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ContainerName string `json:"containerName"`

	// Operator: add appends value; remove drops every item equal to one of
	// value. As in Karmada, there is no replace: remove then add.
	// +kubebuilder:validation:Enum=add;remove
	Operator OverriderOperator `json:"operator"`

	// Value are the items to add or remove.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator: add sets every key of value; remove deletes the keys of
	// value that exist; replace sets the keys of value that exist.
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// Value maps keys to values (the values are ignored for remove).
	// +kubebuilder:validation:MaxProperties=100
	Value map[string]string `json:"value"`
}

// FieldOverrider patches the JSON or YAML document held in the string at
// fieldPath, e.g. /data/config.yaml of a ConfigMap, and writes it back in
// the same format.
// +kubebuilder:validation:XValidation:rule="self.fieldPath.startsWith('/')",message="fieldOverrider[].fieldPath must be a JSON pointer starting with '/', e.g. /data/config.yaml",fieldPath=".fieldPath"
// +kubebuilder:validation:XValidation:rule="!(self.fieldPath == '/metadata' || ['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace', '/metadata/generateName', '/metadata/uid', '/metadata/resourceVersion', '/metadata/ownerReferences', '/metadata/finalizers'].exists(p, self.fieldPath == p || self.fieldPath.startsWith(p + '/')))",message="fieldOverrider[].fieldPath may not touch what the object is (/apiVersion, /kind) or which object it is (/metadata as a whole, or its name, namespace, generateName, uid, resourceVersion, ownerReferences or finalizers): Shepherd keeps the object's identity as the template has it; target another field, e.g. /metadata/labels/<key>",fieldPath=".fieldPath"
// +kubebuilder:validation:XValidation:rule="(has(self.json) && size(self.json) > 0) != (has(self.yaml) && size(self.yaml) > 0)",message="fieldOverrider[] needs exactly one of json and yaml, the format of the document at fieldPath: keep one"
type FieldOverrider struct {
	// FieldPath is a JSON pointer (RFC 6901) to a string field.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	FieldPath string `json:"fieldPath"`

	// JSON operations, for a JSON document.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`

	// YAML operations, for a YAML document.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one operation on a JSON document.
// +kubebuilder:validation:XValidation:rule="self.subPath.startsWith('/')",message="fieldOverrider[].json[].subPath must be a JSON pointer starting with '/', relative to fieldPath, e.g. /db/port",fieldPath=".subPath"
type JSONPatchOperation struct {
	// SubPath is a JSON pointer into the document.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace, as in JSON patch.
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`
	// Value to add or replace with; required for add and replace, not
	// allowed for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is one operation on a YAML document.
// +kubebuilder:validation:XValidation:rule="self.subPath.startsWith('/')",message="fieldOverrider[].yaml[].subPath must be a JSON pointer starting with '/', relative to fieldPath, e.g. /db/port",fieldPath=".subPath"
type YAMLPatchOperation struct {
	// SubPath is a JSON pointer into the document.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace, as in JSON patch.
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`
	// Value to add or replace with; required for add and replace, not
	// allowed for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// IdentityPaths are the JSON pointers (RFC 6901) that say what an object
// is (apiVersion, kind) and which object it is (its name, namespace and the
// metadata Shepherd or the API server keeps). No overrider may touch them,
// anything below them, or /metadata as a whole: a template is rendered
// for a cluster, never turned into another object. The CEL rules on
// plaintext[].path, imageOverrider[].predicate.path and
// fieldOverrider[].fieldPath list the same paths (a test keeps them
// equal); the admission policy shepherd-overrides (config/admission)
// refuses them in any other letter case, where a CEL rule on the CRD would
// exceed its cost budget; and pkg/overrides checks the rendered object
// again.
var IdentityPaths = []string{
	"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/generateName",
	"/metadata/uid", "/metadata/resourceVersion", "/metadata/ownerReferences", "/metadata/finalizers",
}

// TouchesIdentity reports whether an overrider at path would change one
// of IdentityPaths: the path is one of them, lies below one, or is
// /metadata itself, in any letter case (a path such as /Metadata adds a
// field no member accepts, so every apply of the Work would fail).
func TouchesIdentity(path string) bool {
	path = strings.ToLower(path)
	if path == "/metadata" {
		return true
	}
	for _, p := range IdentityPaths {
		p = strings.ToLower(p)
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// OverridePolicy changes templates of its own namespace for some clusters.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=op,categories=shepherd
// +kubebuilder:printcolumn:name="Kinds",type=string,JSONPath=`.spec.resourceSelectors[*].kind`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OverrideSpec `json:"spec"`
}

// OverridePolicyList is a list of OverridePolicies.
// +kubebuilder:object:root=true
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OverridePolicy `json:"items"`
}

// ClusterOverridePolicy changes templates of any namespace and
// cluster-scoped templates for some clusters. It applies before the
// OverridePolicies of the template's namespace, which therefore win.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cop,categories=shepherd
// +kubebuilder:printcolumn:name="Kinds",type=string,JSONPath=`.spec.resourceSelectors[*].kind`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OverrideSpec `json:"spec"`
}

// ClusterOverridePolicyList is a list of ClusterOverridePolicies.
// +kubebuilder:object:root=true
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterOverridePolicy `json:"items"`
}

// Rules returns the rules of the spec: spec.overrideRules, or when there
// are none the deprecated spec.targetCluster and spec.overriders as one
// rule (the API server refuses both together).
func (s *OverrideSpec) Rules() []RuleWithCluster {
	if len(s.OverrideRules) > 0 {
		return s.OverrideRules
	}
	return []RuleWithCluster{{TargetCluster: s.TargetCluster, Overriders: s.Overriders}}
}
