package serviceexport

// RBAC on the hub (gathered into config/rbac/role.yaml by `make generate`):
// the Clusters it serves and the ExportedServices of their execution
// namespaces. In members it reads ServiceExports, Services and
// EndpointSlices and writes ServiceExport and ServiceImport status with the
// hub's identity there.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=multicluster.shepherd.io,resources=exportedservices,verbs=get;list;watch;create;update;patch;delete
