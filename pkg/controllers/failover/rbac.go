package failover

// RBAC of the failover controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): evictions in bindings' spec
// (targets, graceful eviction tasks, history) and their status; Clusters'
// taints.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
