package clustercleanup

// RBAC of the cluster cleanup controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): the cleanup finalizer on
// Clusters, and the Works of a deleted Cluster.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
