package detector

// RBAC of the detector on the hub (gathered into config/rbac/role.yaml by
// `make generate`).
//
// Templates: a policy may name any kind, and the detector watches each kind
// a policy names through the manager's cache (one informer per kind,
// started on demand). A generic read of every resource is inherent to a
// propagator (Karmada's controller manager holds the same rule); it
// includes Secrets of every namespace. Nothing here writes templates.
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
//
// Policies it matches templates against, and the override policies a
// policy's spec.dependentOverrides must name before its binding is written.
// +kubebuilder:rbac:groups=policy.shepherd.io,resources=propagationpolicies;clusterpropagationpolicies;overridepolicies;clusteroverridepolicies,verbs=get;list;watch
//
// Bindings: server-side applied (create and patch), detached (patch),
// deleted when their template goes; their Claimed condition written when
// no policy governs their template any longer (status patch).
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch
//
// "manage" on bindings marks the identity whose writes of a binding's spec
// the admission policy shepherd-bindings (config/admission) lets through:
// the controllers that create and change bindings (this one, the
// scheduler, failover, dependencies, binding) all run under this role.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=manage
//
// spec.schedulePriority names a PriorityClass.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
//
// Events on templates and policies.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
