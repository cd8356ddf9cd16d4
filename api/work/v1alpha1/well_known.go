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

// More well-known keys of annotations and labels Shepherd's controllers
// write and read: each is defined here, once, and nowhere else.
const (
	// AnnotationBinding on a Work holds its binding as "<kind>/<namespace>/<name>"
	// (namespace empty for a ClusterResourceBinding). The binding labels say the
	// same, but a label value is cut to 63 characters and hashed (see
	// names.LabelValue), so mapping a Work event back to its binding reads this
	// annotation instead.
	AnnotationBinding = "work.shepherd.io/binding"
	// AnnotationResourceKind on a Work holds the group and kind of its
	// binding's resource as "<Kind>.<group>" ("ConfigMap" for the core group),
	// schema.GroupKind's String form. The execution controller applies a
	// manifest only of this kind, and a ResourceBinding's Work only into the
	// binding's namespace: a Work never writes outside what its binding names.
	AnnotationResourceKind = "work.shepherd.io/resource-kind"
	// AnnotationRescheduleObserved on a binding holds, in RFC 3339, the
	// spec.rescheduleTriggeredAt the scheduler last served with a successful
	// Fresh cycle. It is written in the same patch as spec.clusters.
	//
	// Times in the API have second precision, so a stamp and the
	// lastScheduledTime of a cycle that ran in the same second compare equal:
	// "stamp later than lastScheduledTime" would drop a request made in the
	// second the binding was last scheduled, and "stamp not earlier" would
	// serve every stamp twice. The annotation breaks the tie (see
	// placement.RescheduleServed).
	AnnotationRescheduleObserved = "work.shepherd.io/reschedule-observed"
	// AnnotationTemplateGeneration on a Work (and on a binding) holds the metadata.generation of
	// the hub template its manifest was built from: once every Work of a
	// binding holds the template's current generation and every member has
	// observed it, the template's status.observedGeneration says so.
	AnnotationTemplateGeneration = "work.shepherd.io/template-generation"
	// AnnotationTemplateMetadata on a binding holds a digest of its
	// template's labels and annotations as the binding was last written,
	// for a template with a generation. With AnnotationTemplateGeneration
	// it says whether the template changed in a way its Works must follow:
	// the template's resourceVersion also moves when only its status is
	// written, which changes nothing sent to a member.
	AnnotationTemplateMetadata = "work.shepherd.io/template-metadata"
	// AnnotationAppliedOverrides on a Work lists the override policy rules
	// applied to its manifest, in the order applied, as
	// "<Kind> <namespace>/<name> rule <n>" entries joined by "; " (a
	// ClusterOverridePolicy without namespace); absent when none applied.
	AnnotationAppliedOverrides = "policy.shepherd.io/applied-overrides"
	// AnnotationRenderKey on a Work is a hash of everything its manifest
	// was rendered from (the template's manifest for the cluster, the
	// Work's settings, the cluster's name, labels and topology, and the
	// override policies that may apply, by UID and generation): while it
	// is unchanged, the binding controller neither renders nor compares
	// the manifest again.
	AnnotationRenderKey = "work.shepherd.io/render-key"
	// AnnotationPodSecurity on the Work of a ResourceBinding carries the
	// Pod Security labels of the binding's namespace on the hub
	// (FormatPodSecurity), which the execution controller gives the member
	// namespace: so a Pull cluster's agent needs no right on the hub's
	// namespaces. Absent when the namespace has none.
	AnnotationPodSecurity = "work.shepherd.io/pod-security"
	// LabelPodMetrics on the Work of a Pull cluster asks its agent to
	// report the workload's pods and metrics in status.podMetrics: a
	// FederatedHPA scales the workload. The FederatedHPA controller sets
	// it (its value: names.LabelValue of the FederatedHPA's name, in the
	// binding's namespace) and removes it when the FederatedHPA goes.
	LabelPodMetrics = "work.shepherd.io/pod-metrics"
	// AnnotationCustomMetrics on a Work labelled LabelPodMetrics names
	// the custom.metrics.k8s.io metrics its FederatedHPA reads (its Pods
	// and Object metrics), FormatCustomMetrics: the agent reports them in
	// status.podMetrics.customMetrics. The FederatedHPA controller writes
	// and removes it with the label; absent when the FederatedHPA reads
	// none.
	AnnotationCustomMetrics = "work.shepherd.io/custom-metrics"
	// AnnotationTiedPolicies on a binding lists the policies that match its
	// template exactly as well as the one governing it (same kind of policy,
	// selector strength and priority), as names.PolicyRef strings separated by
	// commas, the governing one included. The policy status controller reports
	// them on each policy.
	AnnotationTiedPolicies = "policy.shepherd.io/tied-policies"
	// AnnotationRevision on a Work names the binding's rollout revision its
	// manifest was rendered from (status.rollout.revision, a hash of the
	// template and the override policies that apply to it); only Works of
	// bindings with a Progressive or Staged rollout carry it.
	AnnotationRevision = "work.shepherd.io/revision"
	// AnnotationDescheduledAt holds (RFC 3339) when replicas of the binding
	// were last moved: the per-binding rate limit, kept in the API so a
	// restart does not reset it.
	AnnotationDescheduledAt = "work.shepherd.io/descheduled-at"
	// AnnotationDescheduled says what the last move took back ("2 from
	// member2 (keeps 2); unschedulable for longer than 5m0s"), written with
	// AnnotationDescheduledAt, so the ReplicasDescheduled condition can be
	// (re)written from it whatever happened to the first status write.
	AnnotationDescheduled = "work.shepherd.io/descheduled"
	// AnnotationScheduledHash on a binding holds the scheduling controller's SchedulingHash of the binding
	// as the scheduler last left it. It is written in the same patch as
	// spec.clusters, so it always describes the targets it sits next to.
	AnnotationScheduledHash = "work.shepherd.io/scheduled-hash"
	// LabelAttached marks the bindings the dependencies controller creates
	// for the dependencies of a template (attached bindings).
	LabelAttached = "work.shepherd.io/attached"
	// LabelRetainReplicas on a template asks Shepherd to keep the replica
	// count each member has: a member's HorizontalPodAutoscaler owns it.
	// Karmada's label (LabelRetainReplicasKarmada) is honoured too, so
	// migrated templates keep working.
	LabelRetainReplicas        = "work.shepherd.io/retain-replicas"
	LabelRetainReplicasKarmada = "resourcetemplate.karmada.io/retain-replicas"
)
