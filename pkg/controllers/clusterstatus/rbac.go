package clusterstatus

// RBAC of the cluster status controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`).
//
// Clusters: taints (spec) and status.
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters/status,verbs=patch
//
// Renewing a member's ServiceAccount token rewrites its credentials
// Secret: only in shepherd-system, where credentials live (a Role). The
// read is cluster-wide (see package execution's rule).
// +kubebuilder:rbac:groups="",namespace=shepherd-system,resources=secrets,verbs=patch
//
// Heartbeat Leases of members' agents, in each execution namespace
// shepherd-es-<cluster>: read only.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
//
// Works, read only: a report in a Work's status newer than the Cluster's
// lastProbeTime makes a probe write the time (reports.go).
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch
//
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
