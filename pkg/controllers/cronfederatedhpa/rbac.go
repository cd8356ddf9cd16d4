package cronfederatedhpa

// RBAC of the CronFederatedHPA controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): its objects and their
// status, FederatedHPAs' bounds, targets' scale subresource (shared with
// the FederatedHPA controller's rule), events.
// +kubebuilder:rbac:groups=autoscaling.shepherd.io,resources=cronfederatedhpas,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.shepherd.io,resources=cronfederatedhpas/status,verbs=patch;update
// +kubebuilder:rbac:groups=autoscaling.shepherd.io,resources=federatedhpas,verbs=get;patch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
