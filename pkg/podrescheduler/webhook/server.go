// Package webhook is the pod rescheduler's mutating admission webhook: on
// pod creation it copies the owning workload's nodes-tried list onto the
// pod (annotation shepherd.io/excluded-nodes) for the scheduler plugin to
// honour.
//
// The server manages its own TLS (package webhookserver): each Start
// generates a CA and a serving certificate in memory and publishes the CA
// in the webhook configuration's caBundle, so there is no certificate to
// provision or rotate. Two ways to reach it:
//   - in-process (Options.URLConfiguration): the server writes the whole
//     configuration with a url: client config pointing at itself, e.g.
//     https://127.0.0.1:PORT/mutate-v1-pod for a member of `shepherd up`;
//   - in a cluster: config/podrescheduler deploys the configuration with a
//     service: client config, and the server only adds its CA to it.
//
// Stopping the server leaves the configuration in place: with failurePolicy
// Ignore the apiserver admits pods unchanged while nothing answers.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// shutdownTimeout bounds how long Stop waits for requests in flight; the
// apiserver gives up on them after timeoutSeconds anyway.
const shutdownTimeout = timeoutSeconds * time.Second

// Options configure the webhook server.
type Options struct {
	// BindAddress is the IP to listen on (default 127.0.0.1; 0.0.0.0 in a
	// pod).
	BindAddress string
	// Port to listen on; 0 picks a free one.
	Port int
	// Client writes the webhook configuration and reads from the API
	// server what Cache does not answer. It must not be a cached client: a
	// replacement pod is created right after the controller recorded its
	// predecessor's node, and the webhook must see that write.
	Client client.Client
	// Cache, if set, answers reads of workload metadata first (see
	// workload.Cache): pods of workloads that did not opt in then cost no
	// API read. Nil reads everything through Client.
	Cache client.Reader
	// ConfigurationName is the MutatingWebhookConfiguration to publish the
	// CA in (default DefaultConfigurationName).
	ConfigurationName string
	// URLConfiguration makes Start write the whole configuration, with a
	// url: client config pointing at this server; otherwise the
	// configuration must exist and only its caBundle is updated.
	URLConfiguration bool
	// DNSNames are extra names for the serving certificate, e.g. the
	// Service's "NAME.NAMESPACE.svc". The bind address, when it is a
	// specific IP, is always included.
	DNSNames []string
	// Liveness identifies this replica among those publishing their CAs
	// into the deployed configuration (its Namespace holds their Leases).
	Liveness webhookserver.Liveness
	// Logger receives the server's logs (default: discard).
	Logger logr.Logger
}

// Server is the running webhook server.
type Server = webhookserver.Server

// Start serves the webhook until ctx ends or the server is stopped. It
// returns once the server listens and the configuration carries its CA.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Client == nil {
		return nil, errors.New("webhook: Options.Client is required")
	}
	if opts.ConfigurationName == "" {
		opts.ConfigurationName = DefaultConfigurationName
	}
	log := opts.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	hook, err := admission.StandaloneWebhook(&admission.Webhook{Handler: &mutator{cache: opts.Cache, direct: opts.Client, log: log}},
		admission.StandaloneOptions{Logger: log, MetricsPath: Path})
	if err != nil {
		return nil, err
	}
	s, err := webhookserver.Start(ctx, webhookserver.Options{
		Name:            "shepherd-pod-rescheduler-webhook",
		BindAddress:     opts.BindAddress,
		Port:            opts.Port,
		DNSNames:        opts.DNSNames,
		Routes:          []webhookserver.Route{{Path: Path, Handler: hook}},
		ShutdownTimeout: shutdownTimeout,
		Logger:          log,
	})
	if err != nil {
		return nil, err
	}
	err = webhookserver.Publish(ctx, opts.Client, s, Path, opts.URLConfiguration, opts.Liveness, log,
		func(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
			return Configuration(opts.ConfigurationName, cc)
		})
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("webhook: publishing the CA in MutatingWebhookConfiguration %s: %w", opts.ConfigurationName, err)
	}
	log.Info("pod rescheduler webhook serving", "url", s.URL(Path), "configuration", opts.ConfigurationName)
	return s, nil
}
