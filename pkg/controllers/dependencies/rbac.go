package dependencies

// RBAC of the dependencies controllers on the hub (gathered into
// config/rbac/role.yaml by `make generate`).
//
// Bindings of dependencies: spec.requiredBy (patch); attached bindings
// created and deleted.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings,verbs=get;list;watch;create;patch;delete
//
// The objects a workload depends on, watched (metadata only) in every
// namespace, since a workload may live in any: this controller alone needs
// Secrets to be read cluster-wide. RBAC does not tell a metadata read from
// a full one.
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;serviceaccounts;persistentvolumeclaims,verbs=get;list;watch
//
// The workload template, of any kind (see the detector's rule).
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
//
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
