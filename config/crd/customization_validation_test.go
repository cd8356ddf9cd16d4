package crd

import (
	"strings"
	"testing"
)

// TestCustomizationValidation: a ResourceInterpreterCustomization must
// customize something, sensitive alone included, and may not make Secrets
// non-sensitive; the refusals name the field and the fix.
func TestCustomizationValidation(t *testing.T) {
	v := loadValidator(t, "resourceinterpretercustomizations.config.shepherd.io")
	ric := func(target, customizations string) string {
		return "apiVersion: config.shepherd.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: c}\nspec:\n  target: " +
			target + "\n  customizations: " + customizations + "\n"
	}
	credential := "{apiVersion: example.com/v1, kind: Credential}"
	secret := "{apiVersion: v1, kind: Secret}"
	for _, tc := range []struct {
		name, target, customizations string
		want                         []string // substrings of the errors; none when valid
	}{
		{"sensitive alone", credential, "{sensitive: true}", nil},
		{"sensitive false on a custom kind", credential, "{sensitive: false}", nil},
		{"a Secret marked sensitive", secret, "{sensitive: true}", nil},
		{"a Secret customized without sensitive", secret, "{retention: {paths: [/metadata/annotations]}}", nil},
		{"a Secret made non-sensitive", secret, "{sensitive: false}",
			[]string{"spec.customizations.sensitive", "Secrets are always sensitive", "remove sensitive: false"}},
		{"a Secret made non-sensitive beside another operation", secret, "{observesGeneration: false, sensitive: false}",
			[]string{"spec.customizations.sensitive", "remove sensitive: false"}},
		{"components alone", credential, `{components: {expression: "[{'name': 'a', 'replicas': 1}]"}}`, nil},
		{"an empty components expression", credential, "{components: {expression: ''}}",
			[]string{"spec.customizations.components.expression", "at least 1 chars long"}},
		{"nothing customized", credential, "{}",
			[]string{"spec.customizations", "customize at least one operation", "components", "sensitive)"}},
		{"sensitive not a bool", credential, "{sensitive: sometimes}", []string{"spec.customizations.sensitive", "boolean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := v.validate(t, ric(tc.target, tc.customizations))
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("want errors containing %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if msg := errs.ToAggregate().Error(); !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}
