package descheduler

// RBAC of the descheduler on the hub (gathered into config/rbac/role.yaml
// by `make generate`): bindings' targets and annotation, their condition,
// and events on bindings and templates.
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.shepherd.io,resources=resourcebindings/status;clusterresourcebindings/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// Templates are read to put the event on them too.
// +kubebuilder:rbac:groups=*,resources=*,verbs=get
