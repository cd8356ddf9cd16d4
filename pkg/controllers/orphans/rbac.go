package orphans

// RBAC of the orphan sweep on the hub (gathered into
// config/rbac/role.yaml by `make generate`): Clusters to sweep, the Works
// of their execution namespaces (read from the API server, not a cache),
// and events on Clusters. In members it lists objects' metadata and
// deletes orphans with the hub's identity there.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
