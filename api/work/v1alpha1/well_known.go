package v1alpha1

// Well-known labels and annotations Shepherd writes on hub objects. Controllers
// find each other's objects through these, never through name parsing.
const (
	// LabelCluster on a Work names its target cluster.
	LabelCluster = "work.shepherd.io/cluster"
	// LabelBindingKind on a Work: ResourceBinding or ClusterResourceBinding.
	LabelBindingKind = "work.shepherd.io/binding-kind"
	// LabelBindingNamespace on a Work: the namespace of its ResourceBinding.
	LabelBindingNamespace = "work.shepherd.io/binding-namespace"
	// LabelBindingName on a Work: the name of its binding.
	LabelBindingName = "work.shepherd.io/binding-name"

	// LabelPolicyKind on a binding: PropagationPolicy or ClusterPropagationPolicy.
	LabelPolicyKind = "policy.shepherd.io/kind"
	// LabelPolicyNamespace on a binding: the namespace of its PropagationPolicy.
	LabelPolicyNamespace = "policy.shepherd.io/namespace"
	// LabelPolicyName on a binding: the name of its policy.
	LabelPolicyName = "policy.shepherd.io/name"

	// LabelManagedBy marks objects Shepherd applied to a member cluster.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByShepherd is LabelManagedBy's value.
	ManagedByShepherd = "shepherd"
	// AnnotationWork on a member object names the Work (namespace/name) that applied it.
	AnnotationWork = "work.shepherd.io/work"

	// FinalizerWork on a Work makes the execution controller delete the
	// member's objects before the Work goes.
	FinalizerWork = "work.shepherd.io/execution"
	// FinalizerBinding on a binding makes the binding controller remove its
	// Works before the binding goes.
	FinalizerBinding = "work.shepherd.io/binding"

	// FieldManager is the server-side apply field manager of every Shepherd write.
	FieldManager = "shepherd"
)

// Kinds of bindings, as written in LabelBindingKind.
const (
	KindResourceBinding        = "ResourceBinding"
	KindClusterResourceBinding = "ClusterResourceBinding"
)
