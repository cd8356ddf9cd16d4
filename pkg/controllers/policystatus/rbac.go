package policystatus

// RBAC of the policy status controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): policies' status, from their
// bindings and the fleet.
// +kubebuilder:rbac:groups=policy.shepherd.io,resources=propagationpolicies;clusterpropagationpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.shepherd.io,resources=propagationpolicies/status;clusterpropagationpolicies/status,verbs=patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
