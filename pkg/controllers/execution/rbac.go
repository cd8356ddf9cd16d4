package execution

// RBAC of the execution controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`). What it writes in members is
// granted by the members' own RBAC (see `shepherd join`).
//
// Works: its finalizer (patch) and their Applied and Dispatching
// conditions (status).
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works/status,verbs=patch
//
// Clusters, their credentials Secrets, and the hub namespaces whose Pod
// Security labels member namespaces get. Secrets are watched through the
// manager's cache, which cannot be limited to one namespace for Secrets
// alone without also limiting the detector's Secret templates: the read is
// cluster-wide (only credentials in shepherd-system are ever used, see
// package clusterclient).
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets;namespaces,verbs=get;list;watch
//
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
