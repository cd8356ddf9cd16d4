package workstatus

// RBAC of the work status controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`).
//
// Works' manifest statuses and bindings' aggregated status.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works;resourcebindings;clusterresourcebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works/status;resourcebindings/status;clusterresourcebindings/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
//
// Templates: the status summed over members is written back into the
// template's status subresource (a Deployment on the hub shows the ready
// replicas of all members), for any kind a policy propagates. This is the
// only write to templates, and only to their status: nothing in a
// template's spec or metadata can be changed with it.
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*/status,verbs=patch
//
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
