package admission

// RBAC on the hub of the validating webhooks (gathered into
// config/rbac/role.yaml by `make generate`; the controllers of the objects
// they check are in package controllers/customization).
//
// The webhooks publish their CA in the deployed configuration
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
