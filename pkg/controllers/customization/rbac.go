package customization

// RBAC of the two controllers on the hub (gathered into
// config/rbac/role.yaml by `make generate`): the Compiled, KindFound and
// Active conditions of ResourceInterpreterCustomizations, the Compiled
// and Active conditions of HealthInterpreters. The webhook that checks
// them needs no API access.
// +kubebuilder:rbac:groups=config.shepherd.io,resources=resourceinterpretercustomizations,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.shepherd.io,resources=resourceinterpretercustomizations/status,verbs=patch
// +kubebuilder:rbac:groups=config.shepherd.io,resources=healthinterpreters,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.shepherd.io,resources=healthinterpreters/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
