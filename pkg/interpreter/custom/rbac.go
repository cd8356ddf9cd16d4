package custom

// RBAC of the interpreter customization controller on the hub (gathered
// into config/rbac/role.yaml by `make generate`): the Compiled, KindFound
// and Active conditions of ResourceInterpreterCustomizations. The
// webhook that checks them needs no API access.
// +kubebuilder:rbac:groups=config.shepherd.io,resources=resourceinterpretercustomizations,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.shepherd.io,resources=resourceinterpretercustomizations/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
