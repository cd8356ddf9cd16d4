package custom

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
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
