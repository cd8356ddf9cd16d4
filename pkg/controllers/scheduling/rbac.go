package scheduling

// RBAC of the scheduler on the hub (gathered into config/rbac/role.yaml by
// `make generate`): it writes bindings' spec.clusters and their status, and
// reads the fleet.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
