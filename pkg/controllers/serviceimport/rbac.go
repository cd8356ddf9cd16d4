package serviceimport

// RBAC on the hub (gathered into config/rbac/role.yaml by `make generate`):
// the Clusters of the ClusterSet, the ExportedServices it merges (and their
// status), and the Works it sends to members.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=multicluster.shepherd.io,resources=exportedservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=multicluster.shepherd.io,resources=exportedservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch;create;update;patch;delete
