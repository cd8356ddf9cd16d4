package custom

import (
	"context"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// Names of the validating webhook.
const (
	WebhookName = "resourceinterpretercustomizations.config.shepherd.io"
	// ValidatePath is where the webhook is served.
	ValidatePath = "/validate-config-shepherd-io-v1alpha1-resourceinterpretercustomization"
	// Resource is the plural the webhook's rule names.
	Resource = "resourceinterpretercustomizations"
)

// Validate returns what is wrong with c that the CRD's schema cannot say:
// expressions that do not compile or return the wrong type, pointers that
// do not point at a field, an apiVersion that does not parse.
func Validate(c *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	_, errs := Compile(c)
	return errs
}

type validator struct {
	decoder admission.Decoder
}

// Handle admits a customization that compiles; an update leaving the spec
// alone is always admitted (finalizers, labels, status, deletion).
func (v *validator) Handle(_ context.Context, req admission.Request) admission.Response {
	c := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := v.decoder.Decode(req, c); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old := &configv1alpha1.ResourceInterpreterCustomization{}
		if err := v.decoder.DecodeRaw(req.OldObject, old); err == nil && equality.Semantic.DeepEqual(old.Spec, c.Spec) {
			return admission.Allowed("spec unchanged")
		}
	}
	if errs := Validate(c); len(errs) > 0 {
		return webhookserver.Invalid(configv1alpha1.SchemeGroupVersion.WithKind("ResourceInterpreterCustomization").GroupKind(), c.Name, errs)
	}
	return admission.Allowed("")
}

// NewValidatingHandler returns the webhook's HTTP handler.
func NewValidatingHandler(log logr.Logger) (http.Handler, error) {
	return admission.StandaloneWebhook(&admission.Webhook{Handler: &validator{decoder: admission.NewDecoder(scheme.Scheme)}},
		admission.StandaloneOptions{Logger: log, MetricsPath: ValidatePath})
}
