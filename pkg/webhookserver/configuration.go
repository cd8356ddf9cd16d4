package webhookserver

import (
	"context"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Configuration is a MutatingWebhookConfiguration or a
// ValidatingWebhookConfiguration.
type Configuration interface {
	*admissionregistrationv1.MutatingWebhookConfiguration | *admissionregistrationv1.ValidatingWebhookConfiguration
	client.Object
}

// Publish makes the configuration that desired builds call s at path.
// With url it writes the whole configuration, with a url: client config
// pointing at s (WriteURLConfiguration); otherwise the configuration of
// that name must exist, and its caBundle holds the CAs of the live
// replicas, this one's included, for as long as ctx lasts (PublishLive).
func Publish[C Configuration](ctx context.Context, c client.Client, s *Server, path string, url bool, l Liveness, log logr.Logger,
	desired func(admissionregistrationv1.WebhookClientConfig) C) error {
	if url {
		u := s.URL(path)
		return WriteURLConfiguration(ctx, c, desired(admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: s.CABundle()}))
	}
	return PublishLive(ctx, c, desired(admissionregistrationv1.WebhookClientConfig{}), s.CABundle(), l, log)
}

// WriteURLConfiguration creates desired, or replaces the webhooks of the
// stored configuration of its name with desired's: how an in-process hub
// or member, which has no Services, reaches a webhook on loopback.
func WriteURLConfiguration[C Configuration](ctx context.Context, c client.Client, desired C) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := newLike(desired)
		err := c.Get(ctx, client.ObjectKeyFromObject(desired), existing)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, desired.DeepCopyObject().(C))
		}
		if err != nil {
			return err
		}
		setWebhooksFrom(existing, desired)
		return c.Update(ctx, existing)
	})
}

// newLike returns an empty configuration of obj's kind.
func newLike[C Configuration](obj C) C {
	var out client.Object
	switch any(obj).(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		out = &admissionregistrationv1.MutatingWebhookConfiguration{}
	default:
		out = &admissionregistrationv1.ValidatingWebhookConfiguration{}
	}
	return out.(C)
}

func setWebhooksFrom[C Configuration](dst, src C) {
	switch d := any(dst).(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		d.Webhooks = any(src).(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		d.Webhooks = any(src).(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks
	}
}

// ClientConfigs returns pointers to the client configs of obj's webhooks.
func ClientConfigs[C Configuration](obj C) []*admissionregistrationv1.WebhookClientConfig {
	var out []*admissionregistrationv1.WebhookClientConfig
	switch o := any(obj).(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			out = append(out, &o.Webhooks[i].ClientConfig)
		}
	}
	return out
}
