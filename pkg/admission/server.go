package admission

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// DefaultWebhookConfigurationName is the ValidatingWebhookConfiguration
// that calls the hub's webhooks.
const DefaultWebhookConfigurationName = "shepherd-healthinterpreter"

// webhookTimeoutSeconds: compiling one expression takes well under a
// millisecond; the rest is the round trip.
const webhookTimeoutSeconds = 5

// WebhookConfiguration is the ValidatingWebhookConfiguration calling the
// HealthInterpreter webhook at cc on every creation and update of a
// HealthInterpreter. config/controllermanager/webhook.yaml is the same
// object with a Service client config; a test keeps them in sync.
//
// failurePolicy Fail: a rule that was not checked is not admitted. Only
// HealthInterpreters are covered, so a webhook that is down blocks
// nothing else; the health-interpreter controller still refuses to use a
// rule that does not compile (condition Compiled=False), whatever got in.
//
// The same configuration, served by the same server, also holds the
// customization webhook (celWebhook, as the first) and the credentials
// webhook (CredentialsWebhook) for Secrets of secretsNamespace, each at
// its own path on the same endpoint.
func WebhookConfiguration(name string, cc admissionregistrationv1.WebhookClientConfig, secretsNamespace string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: admissionregistrationv1.SchemeGroupVersion.String(),
			Kind:       "ValidatingWebhookConfiguration",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			celWebhook(HealthInterpreterWebhookName, "healthinterpreters", cc),
			celWebhook(CustomizationWebhookName, customizationResource, atPath(cc, CustomizationWebhookPath)),
			CredentialsWebhook(atPath(cc, CredentialsWebhookPath), secretsNamespace),
			autoscalerWebhook(FederatedHPAWebhookName, "federatedhpas", atPath(cc, FederatedHPAWebhookPath)),
			autoscalerWebhook(CronFederatedHPAWebhookName, "cronfederatedhpas", atPath(cc, CronFederatedHPAWebhookPath)),
		},
	}
}

// celWebhook checks every creation and update of the cluster-scoped
// config resource whose rules are CEL that must compile
// (HealthInterpreters, ResourceInterpreterCustomizations).
func celWebhook(name, resource string, cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.ValidatingWebhook {
	return validatingWebhook(name, cc, admissionregistrationv1.Rule{
		APIGroups:   []string{configv1alpha1.SchemeGroupVersion.Group},
		APIVersions: []string{configv1alpha1.SchemeGroupVersion.Version},
		Resources:   []string{resource},
		Scope:       ptr.To(admissionregistrationv1.ClusterScope),
	}, &metav1.LabelSelector{})
}

// validatingWebhook is the hub's webhook entry calling cc on every
// creation and update rule matches in the namespaces ns selects: it fails
// closed, has no side effects and waits webhookTimeoutSeconds. Every hub
// webhook is built here, so the three cannot drift apart.
func validatingWebhook(name string, cc admissionregistrationv1.WebhookClientConfig, rule admissionregistrationv1.Rule, ns *metav1.LabelSelector) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:         name,
		ClientConfig: cc,
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       rule,
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:       ns,
		ObjectSelector:          &metav1.LabelSelector{},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](webhookTimeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// atPath is cc calling path instead of HealthInterpreterWebhookPath on
// the same endpoint.
func atPath(cc admissionregistrationv1.WebhookClientConfig, path string) admissionregistrationv1.WebhookClientConfig {
	out := *cc.DeepCopy()
	switch {
	case out.URL != nil:
		out.URL = ptr.To(strings.TrimSuffix(*out.URL, HealthInterpreterWebhookPath) + path)
	case out.Service != nil:
		out.Service.Path = ptr.To(path)
	}
	return out
}

// WebhookOptions configure ServeWebhook.
type WebhookOptions struct {
	// BindAddress and Port to listen on (defaults 127.0.0.1 and a free
	// port).
	BindAddress string
	Port        int
	// DNSNames are extra names for the serving certificate, e.g. the
	// Service's "NAME.NAMESPACE.svc".
	DNSNames []string
	// ConfigurationName is the ValidatingWebhookConfiguration to publish
	// the CA in (default DefaultWebhookConfigurationName).
	ConfigurationName string
	// URLConfiguration writes the whole configuration with a url: client
	// config pointing at this server (an in-process hub, which has no
	// Services); otherwise the configuration must exist (deployed from
	// config/controllermanager) and only its caBundle is updated.
	URLConfiguration bool
	// Liveness identifies this replica among those publishing their CAs
	// into the deployed configuration (its Namespace holds their Leases).
	Liveness webhookserver.Liveness
	// SecretsNamespace is where the credentials webhook checks Secrets
	// (default clusterclient.DefaultSecretsNamespace).
	SecretsNamespace string
}

// ServeWebhook serves the hub's validating webhooks until ctx ends, after
// publishing its CA with c (an uncached client of the hub). It returns
// once the webhook is reachable, with the server.
func ServeWebhook(ctx context.Context, c client.Client, o WebhookOptions, log logr.Logger) (*webhookserver.Server, error) {
	if o.ConfigurationName == "" {
		o.ConfigurationName = DefaultWebhookConfigurationName
	}
	if o.SecretsNamespace == "" {
		o.SecretsNamespace = clusterclient.DefaultSecretsNamespace
	}
	h, err := NewHealthInterpreterHandler(log)
	if err != nil {
		return nil, err
	}
	credentials, err := NewCredentialsHandler(log.WithName("credentials"))
	if err != nil {
		return nil, err
	}
	customizations, err := NewCustomizationHandler(log.WithName("customizations"))
	if err != nil {
		return nil, err
	}
	fhpa, cronfhpa, err := newAutoscalerHandlers(c, log)
	if err != nil {
		return nil, err
	}
	s, err := webhookserver.Start(ctx, webhookserver.Options{
		Name:        "shepherd-healthinterpreter-webhook",
		BindAddress: o.BindAddress,
		Port:        o.Port,
		DNSNames:    o.DNSNames,
		Routes: []webhookserver.Route{{Path: HealthInterpreterWebhookPath, Handler: h}, {Path: CustomizationWebhookPath, Handler: customizations},
			{Path: CredentialsWebhookPath, Handler: credentials},
			{Path: FederatedHPAWebhookPath, Handler: fhpa}, {Path: CronFederatedHPAWebhookPath, Handler: cronfhpa}},
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	err = webhookserver.Publish(ctx, c, s, HealthInterpreterWebhookPath, o.URLConfiguration, o.Liveness, log,
		func(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
			return WebhookConfiguration(o.ConfigurationName, cc, o.SecretsNamespace)
		})
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("publishing the CA in ValidatingWebhookConfiguration %s: %w", o.ConfigurationName, err)
	}
	log.Info("the hub's validating webhooks serving", "healthInterpreters", s.URL(HealthInterpreterWebhookPath),
		"customizations", s.URL(CustomizationWebhookPath), "credentials", s.URL(CredentialsWebhookPath), "configuration", o.ConfigurationName)
	return s, nil
}
