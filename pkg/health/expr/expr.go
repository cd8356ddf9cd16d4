// Package expr compiles and evaluates health rules written in CEL over
// the member object observedObj: the rule of a HealthInterpreter and the
// health operation of a ResourceInterpreterCustomization (both compiled by
// package interpreter/custom). A rule is compiled once and is safe for
// concurrent use; an evaluation is cost-limited, and any error makes the
// object Unknown, which never triggers failover.
package expr

import (
	"fmt"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// VariableName is the variable an expression reads the member object from.
const VariableName = "observedObj"

// costLimit bounds one evaluation (CEL's abstract cost units), so a rule
// iterating a huge list cannot stall the status controller; the API
// server's own per-expression limit is of the same order.
const costLimit = 1_000_000

// env is shared: a cel.Env is safe for concurrent use and costly to build.
var env = mustEnv()

func mustEnv() *celgo.Env {
	e, err := celgo.NewEnv(celgo.Variable(VariableName, celgo.DynType), ext.Strings())
	if err != nil {
		panic(err) // static declarations: cannot fail
	}
	return e
}

// Interpreter evaluates one compiled expression (its Interpret is an
// interpreter.HealthFunc); it is safe for concurrent use.
type Interpreter struct {
	source string
	prg    celgo.Program
}

var _ interpreter.HealthFunc = (*Interpreter)(nil).Interpret

// Compile checks and compiles expr. It fails when the expression does not
// parse or type-check, or when its type cannot be a health (neither
// string, bool, nor dynamic).
func Compile(expr string) (*Interpreter, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	switch out := ast.OutputType(); {
	case out.IsExactType(celgo.StringType), out.IsExactType(celgo.BoolType), out.IsExactType(celgo.DynType):
	default:
		return nil, fmt.Errorf("the expression returns %s; it must return a string (Healthy, Unhealthy, Unknown) or a bool", out)
	}
	prg, err := env.Program(ast, celgo.CostLimit(costLimit), celgo.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return &Interpreter{source: expr, prg: prg}, nil
}

// Interpret evaluates the expression on obj. Evaluation errors and results
// that are not a health are Unknown, with the reason saying why: a broken
// rule must never cause a failover.
func (i *Interpreter) Interpret(obj *unstructured.Unstructured) interpreter.HealthResult {
	val, _, err := i.prg.Eval(map[string]any{VariableName: obj.Object})
	if err != nil {
		return interpreter.HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: "CEL evaluation failed: " + err.Error()}
	}
	switch v := val.Value().(type) {
	case bool:
		if v {
			return interpreter.HealthResult{Health: policyv1alpha1.ResourceHealthy, Reason: "CEL expression returned true"}
		}
		return interpreter.HealthResult{Health: policyv1alpha1.ResourceUnhealthy, Reason: "CEL expression returned false"}
	case string:
		switch h := policyv1alpha1.ResourceHealth(v); h {
		case policyv1alpha1.ResourceHealthy, policyv1alpha1.ResourceUnhealthy, policyv1alpha1.ResourceUnknown:
			return interpreter.HealthResult{Health: h, Reason: "CEL expression returned " + v}
		}
		return interpreter.HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("CEL expression returned %q, not Healthy, Unhealthy or Unknown", v)}
	}
	return interpreter.HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("CEL expression returned a %T, not a string or bool", val.Value())}
}

// Truncate keeps a compiler message within the limit of a condition's
// message (and an event's note).
func Truncate(s string) string {
	const maxLen = 4096
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen-3] + "..."
}
