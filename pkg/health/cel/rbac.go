package cel

// RBAC on the hub of the health interpreter controller and of the
// validating webhook (gathered into config/rbac/role.yaml by
// `make generate`).
//
// The controller: HealthInterpreters' Compiled condition.
// +kubebuilder:rbac:groups=config.shepherd.io,resources=healthinterpreters,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.shepherd.io,resources=healthinterpreters/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// The webhook publishes its CA in the deployed configuration
// (config/controllermanager/webhook.yaml), and only in that one: get and
// update by name. --webhook-configuration with another name needs this
// rule changed; --webhook-url-configuration, which creates the
// configuration, is for a hub the process reaches directly and is not
// granted here.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=shepherd-healthinterpreter,verbs=get;update
//
// Each replica keeps its CA in a Lease of shepherd-system that it renews,
// and deletes expired ones of others (package webhookserver).
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=shepherd-system,resources=leases,verbs=get;list;create;update;delete
