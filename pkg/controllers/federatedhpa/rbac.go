package federatedhpa

// RBAC of the FederatedHPA controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): FederatedHPAs and their
// status, bindings and Clusters read, events.
// +kubebuilder:rbac:groups=autoscaling.shepherd.io,resources=federatedhpas,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.shepherd.io,resources=federatedhpas/status,verbs=patch;update
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.shepherd.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// Works: the samples Pull members' agents report (status.podMetrics), and
// the label that asks for them on the target's Works (metadata only).
// +kubebuilder:rbac:groups=work.shepherd.io,resources=works,verbs=get;list;watch;patch
//
// Targets are templates of any kind (read through the rule every
// controller shares); only their scale subresource is patched, so the
// controller can change a template's replicas and nothing else of it.
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=patch
