package reschedule

// RBAC of the reschedule controller on the hub (gathered into
// config/rbac/role.yaml by `make generate`): RescheduleTasks' status and
// their deletion after ttlSecondsAfterFinished; spec.rescheduleTriggeredAt
// on the bindings they select (patch); the policies they name.
// +kubebuilder:rbac:groups=task.shepherd.io,resources=rescheduletasks,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=task.shepherd.io,resources=rescheduletasks/status,verbs=patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=policy.shepherd.io,resources=propagationpolicies;clusterpropagationpolicies,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
