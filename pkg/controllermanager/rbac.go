package controllermanager

// What the manager itself needs on the hub, beside its controllers' own
// rules (each controller package has an rbac.go; `make generate` gathers
// them all into config/rbac/role.yaml).
//
// Leader election: the Lease DefaultLeaderElectionID in the manager's
// namespace, read, created and renewed (client-go's Lease lock; the fence
// reads nothing else). Only in shepherd-system: a Role, not the ClusterRole.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=shepherd-system,resources=leases,verbs=get;create;update
//
// New creates its namespace when it is missing (leader election, the
// webhook's CA Leases). Namespaces cannot be restricted by name on create.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create
