package admission

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// The credentials webhook refuses, at admission, a Secret of the secrets
// namespace whose kubeconfig the controllers would refuse to use: one that
// refers to files or plugins (see clusterclient.ValidateKubeconfig).
const (
	CredentialsWebhookName = "credentials.cluster.shepherd.io"
	CredentialsWebhookPath = "/validate-cluster-credentials"
)

type credentialsValidator struct {
	decoder admission.Decoder
}

// Handle admits a Secret unless its kubeconfig key holds a kubeconfig that
// does not parse or is not self-contained.
func (v *credentialsValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	s := &corev1.Secret{}
	if err := v.decoder.Decode(req, s); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	data, ok := s.Data[clusterclient.SecretKeyKubeconfig]
	if !ok {
		return admission.Allowed("no kubeconfig")
	}
	if err := clusterclient.ValidateKubeconfig(data); err != nil {
		return Invalid(corev1.SchemeGroupVersion.WithKind("Secret").GroupKind(), s.Name, field.ErrorList{
			field.Invalid(field.NewPath("data", clusterclient.SecretKeyKubeconfig), "(kubeconfig)", fmt.Sprintf("%v (a Cluster's credentials must be self-contained)", err))})
	}
	return admission.Allowed("")
}

// NewCredentialsHandler returns the credentials webhook's HTTP handler.
func NewCredentialsHandler(log logr.Logger) (http.Handler, error) {
	return admission.StandaloneWebhook(&admission.Webhook{Handler: &credentialsValidator{decoder: admission.NewDecoder(scheme.Scheme)}},
		admission.StandaloneOptions{Logger: log, MetricsPath: CredentialsWebhookPath})
}

// CredentialsWebhook is the webhook entry calling cc for every creation or
// update of a Secret with a kubeconfig key in namespace. failurePolicy
// Fail: only such Secrets are sent (matchConditions), so a webhook that is
// down holds up nothing else; the client builder refuses the same
// kubeconfigs anyway.
func CredentialsWebhook(cc admissionregistrationv1.WebhookClientConfig, namespace string) admissionregistrationv1.ValidatingWebhook {
	w := validatingWebhook(CredentialsWebhookName, cc, admissionregistrationv1.Rule{
		APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"},
		Scope: ptr.To(admissionregistrationv1.NamespacedScope),
	}, &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}})
	w.MatchConditions = []admissionregistrationv1.MatchCondition{{
		Name:       "has-kubeconfig",
		Expression: "has(object.data) && '" + clusterclient.SecretKeyKubeconfig + "' in object.data",
	}}
	return w
}
