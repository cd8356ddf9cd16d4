package custom

import (
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// Names of the validating webhook of ResourceInterpreterCustomizations.
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

// ValidateHealthInterpreter returns what is wrong with hi that the CRD's
// schema cannot say: whether its expression compiles, and whether its
// apiVersion parses.
func ValidateHealthInterpreter(hi *configv1alpha1.HealthInterpreter) field.ErrorList {
	_, errs := CompileHealthInterpreter(hi)
	return errs
}

// NewValidatingHandler returns the webhook's HTTP handler: it admits a
// customization that compiles (see webhookserver.SpecValidator).
func NewValidatingHandler(log logr.Logger) (http.Handler, error) {
	return webhookserver.SpecValidator[*configv1alpha1.ResourceInterpreterCustomization]{
		Kind: configv1alpha1.SchemeGroupVersion.WithKind("ResourceInterpreterCustomization").GroupKind(),
		New: func() *configv1alpha1.ResourceInterpreterCustomization {
			return &configv1alpha1.ResourceInterpreterCustomization{}
		},
		Spec:     func(c *configv1alpha1.ResourceInterpreterCustomization) any { return c.Spec },
		Validate: Validate,
	}.Handler(scheme.Scheme, ValidatePath, log)
}

// HealthInterpreterValidator admits a HealthInterpreter whose rule
// compiles (see webhookserver.SpecValidator).
func HealthInterpreterValidator() webhookserver.SpecValidator[*configv1alpha1.HealthInterpreter] {
	return webhookserver.SpecValidator[*configv1alpha1.HealthInterpreter]{
		Kind:     configv1alpha1.SchemeGroupVersion.WithKind("HealthInterpreter").GroupKind(),
		New:      func() *configv1alpha1.HealthInterpreter { return &configv1alpha1.HealthInterpreter{} },
		Spec:     func(hi *configv1alpha1.HealthInterpreter) any { return hi.Spec },
		Validate: ValidateHealthInterpreter,
	}
}
