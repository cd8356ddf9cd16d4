package clusterclient

// RBAC on the hub of the member clients the controllers share (gathered
// into config/rbac/role.yaml by `make generate`): a Cluster's credentials
// Secret, read through the manager's cache. Only Secrets of
// SecretsNamespace (shepherd-system) are ever used, but the cache's
// Secret informer spans every namespace (see package execution's rule).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
