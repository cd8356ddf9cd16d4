package webhook

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the webhook configuration and its single webhook.
const (
	DefaultConfigurationName = "shepherd-pod-rescheduler"
	WebhookName              = "pods.podrescheduler.shepherd.io"
	// Path is where the server serves the webhook.
	Path = "/mutate-v1-pod"
)

// timeoutSeconds is short: the webhook only reads one or two objects, and
// pod creation must not wait on it for long when it is slow.
const timeoutSeconds = 2

// Configuration is the MutatingWebhookConfiguration calling the webhook
// at cc for every pod created with an owner outside kube-system.
// config/podrescheduler/webhook.yaml is the same object with a Service
// client config; a test keeps them in sync.
//
// failurePolicy Ignore: the webhook being down, slow or failing admits pods
// unchanged. The match condition spares owner-less pods the call: the
// controller annotates the pods it recreates itself.
func Configuration(name string, cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: admissionregistrationv1.SchemeGroupVersion.String(),
			Kind:       "MutatingWebhookConfiguration",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         WebhookName,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{""},
					APIVersions: []string{"v1"},
					Resources:   []string{"pods"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:   ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
			}}},
			ObjectSelector:          &metav1.LabelSelector{},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](timeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "owned-pods-only",
				Expression: "has(object.metadata.ownerReferences)",
			}},
		}},
	}
}

// writeURLConfiguration creates or replaces the configuration name so that
// it calls url with caBundle: how in-process members, which have no
// Services, reach a webhook on loopback.
func writeURLConfiguration(ctx context.Context, c client.Client, name, url string, caBundle []byte) error {
	desired := Configuration(name, admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle})
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := &admissionregistrationv1.MutatingWebhookConfiguration{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, existing)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, desired.DeepCopy())
		}
		if err != nil {
			return err
		}
		existing.Webhooks = desired.Webhooks
		return c.Update(ctx, existing)
	})
}

// injectCABundle adds caPEM to the caBundle of every webhook of the
// existing configuration name (deployed with the manifests, pointing at
// the Service).
func injectCABundle(ctx context.Context, c client.Client, name string, caPEM []byte, now time.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, existing); err != nil {
			return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", name, err)
		}
		for i := range existing.Webhooks {
			cc := &existing.Webhooks[i].ClientConfig
			cc.CABundle = mergeCABundle(cc.CABundle, caPEM, now)
		}
		return c.Update(ctx, existing)
	})
}
