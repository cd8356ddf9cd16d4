package admission

import (
	"net/http"

	"github.com/go-logr/logr"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Names of the validating webhooks of HealthInterpreters and
// ResourceInterpreterCustomizations.
const (
	HealthInterpreterWebhookName = "healthinterpreters.config.shepherd.io"
	// HealthInterpreterWebhookPath is where the HealthInterpreter webhook
	// is served.
	HealthInterpreterWebhookPath = "/validate-config-shepherd-io-v1alpha1-healthinterpreter"

	CustomizationWebhookName = "resourceinterpretercustomizations.config.shepherd.io"
	// CustomizationWebhookPath is where the ResourceInterpreterCustomization
	// webhook is served.
	CustomizationWebhookPath = "/validate-config-shepherd-io-v1alpha1-resourceinterpretercustomization"
	// customizationResource is the plural the customization webhook's
	// rule names.
	customizationResource = "resourceinterpretercustomizations"
)

// NewHealthInterpreterHandler returns the HealthInterpreter webhook's HTTP
// handler.
func NewHealthInterpreterHandler(log logr.Logger) (http.Handler, error) {
	return HealthInterpreterValidator().Handler(scheme.Scheme, HealthInterpreterWebhookPath, log)
}

// NewCustomizationHandler returns the ResourceInterpreterCustomization
// webhook's HTTP handler: it admits a customization that compiles (see
// SpecValidator and interpreter.ValidateCustomization).
func NewCustomizationHandler(log logr.Logger) (http.Handler, error) {
	return CustomizationValidator().Handler(scheme.Scheme, CustomizationWebhookPath, log)
}

// CustomizationValidator admits a ResourceInterpreterCustomization that
// compiles (see SpecValidator and interpreter.ValidateCustomization).
func CustomizationValidator() SpecValidator[*configv1alpha1.ResourceInterpreterCustomization] {
	return SpecValidator[*configv1alpha1.ResourceInterpreterCustomization]{
		Kind: configv1alpha1.SchemeGroupVersion.WithKind("ResourceInterpreterCustomization").GroupKind(),
		New: func() *configv1alpha1.ResourceInterpreterCustomization {
			return &configv1alpha1.ResourceInterpreterCustomization{}
		},
		Spec:     func(c *configv1alpha1.ResourceInterpreterCustomization) any { return c.Spec },
		Validate: interpreter.ValidateCustomization,
	}
}

// HealthInterpreterValidator admits a HealthInterpreter whose rule
// compiles (see SpecValidator and interpreter.ValidateHealthInterpreter).
func HealthInterpreterValidator() SpecValidator[*configv1alpha1.HealthInterpreter] {
	return SpecValidator[*configv1alpha1.HealthInterpreter]{
		Kind:     configv1alpha1.SchemeGroupVersion.WithKind("HealthInterpreter").GroupKind(),
		New:      func() *configv1alpha1.HealthInterpreter { return &configv1alpha1.HealthInterpreter{} },
		Spec:     func(hi *configv1alpha1.HealthInterpreter) any { return hi.Spec },
		Validate: interpreter.ValidateHealthInterpreter,
	}
}
