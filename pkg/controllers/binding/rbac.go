package binding

// RBAC of the binding controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`).
//
// Bindings: its finalizer and target states (patch), FullyApplied (status).
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch
//
// Works: server-side applied into shepherd-es-<cluster> (create and patch),
// deleted when their cluster leaves the placement.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch;create;patch;delete
//
// Execution namespaces, created when missing (namespaces are cluster-scoped
// and a create cannot be restricted by name).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create
//
// Clusters (being deleted, override policies' cluster selectors) and the
// override policies rendering each cluster's Work.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.shepherd.io,resources=overridepolicies;clusteroverridepolicies,verbs=get;list;watch
//
// The template, of any kind, read from the detector's informers (see the
// detector's rule).
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
//
// Rollout revisions: ControllerRevisions owned by the binding, in its
// namespace (shepherd-system for cluster-scoped bindings, created when
// missing), read uncached and deleted when pruned or the binding goes.
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;create;delete
//
// Events on bindings and templates.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
