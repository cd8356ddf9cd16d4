// Package admission holds the hub's validating admission webhooks and
// serves them: the checks of HealthInterpreters and
// ResourceInterpreterCustomizations (their CEL must compile: package
// interpreter's checks, which the controllers of package
// controllers/customization share), of cluster
// credentials (a kubeconfig Secret must be self-contained: package
// clusterclient's rule) and SpecValidator, which the first two are built
// on. ServeWebhook serves them all from one server (package
// webhookserver) and publishes the ValidatingWebhookConfiguration that
// calls them.
package admission
