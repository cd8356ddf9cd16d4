package interpreter

import (
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/celrule"
)

// Health rules are CEL over the member object, observedObj: the rule of a
// HealthInterpreter and the health operation of a
// ResourceInterpreterCustomization. A rule is compiled once and is safe
// for concurrent use; an evaluation is cost-limited (package celrule), and
// any error makes the object Unknown, which never triggers failover.

// compileHealthRule checks and compiles a health rule. It fails, with an
// error beginning "does not compile", when the expression does not parse
// or type-check, or when its type cannot be a health (neither string,
// bool, nor dynamic).
func compileHealthRule(expression string) (HealthFunc, error) {
	rule, err := celrule.Compile(celrule.ObservedObject, expression, cel.StringType, cel.BoolType)
	if out := (*celrule.OutputError)(nil); errors.As(err, &out) {
		return nil, fmt.Errorf("does not compile: the expression returns %s; it must return a string (Healthy, Unhealthy, Unknown) or a bool", out.Returns)
	}
	if err != nil {
		return nil, err
	}
	return func(obj *unstructured.Unstructured) HealthResult { return healthOf(rule.Value(obj)) }, nil
}

// healthOf reads a health rule's result. Evaluation errors and results
// that are not a health are Unknown, with the reason saying why: a broken
// rule must never cause a failover.
func healthOf(v any, err error) HealthResult {
	if err != nil {
		return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: "CEL evaluation failed: " + err.Error()}
	}
	switch v := v.(type) {
	case bool:
		if v {
			return HealthResult{Health: policyv1alpha1.ResourceHealthy, Reason: "CEL expression returned true"}
		}
		return HealthResult{Health: policyv1alpha1.ResourceUnhealthy, Reason: "CEL expression returned false"}
	case string:
		switch h := policyv1alpha1.ResourceHealth(v); h {
		case policyv1alpha1.ResourceHealthy, policyv1alpha1.ResourceUnhealthy, policyv1alpha1.ResourceUnknown:
			return HealthResult{Health: h, Reason: "CEL expression returned " + v}
		}
		return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("CEL expression returned %q, not Healthy, Unhealthy or Unknown", v)}
	}
	return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("CEL expression returned a %T, not a string or bool", v)}
}
