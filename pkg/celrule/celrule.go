// Package celrule is the one CEL environment of Shepherd's rules: the
// expressions of ResourceInterpreterCustomizations (over the template,
// `object`) and the health rules of HealthInterpreters and customizations
// (over the member object, `observedObj`). Both read one variable, and that
// is the only difference between them: the same options (CEL's standard
// library, ext.Strings, and ext.TwoVarComprehensions, whose transformList
// gives a list element's index, e.g. for the JSON pointer of a field in
// it), the same cost limit and the same interrupt frequency, defined once
// here.
//
// Compile checks an expression once, rejecting one that does not compile,
// reads the other variable, or returns the wrong type; the Rule it returns
// is safe for concurrent use, and every evaluation is cost-limited.
package celrule

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The variables a rule reads.
const (
	// Object is the template on the hub, read by a customization's
	// expressions (replicas, dependencies).
	Object = "object"
	// ObservedObject is the object in a member cluster, read by health
	// rules.
	ObservedObject = "observedObj"
)

// variables says what each variable holds, for the messages.
var variables = map[string]string{
	Object:         "the template",
	ObservedObject: "the member object",
}

// CostLimit bounds one evaluation (CEL's abstract cost units), so a rule
// iterating a huge list cannot stall a controller; the API server's own
// per-expression limit is of the same order.
const CostLimit = 1_000_000

// interruptFrequency is how many comprehension iterations run between two
// checks of the cost limit.
const interruptFrequency = 100

// envs are built once per variable: a cel.Env is safe for concurrent use
// and costly to build.
var envs = func() map[string]func() (*cel.Env, error) {
	out := make(map[string]func() (*cel.Env, error), len(variables))
	for v := range variables {
		out[v] = sync.OnceValues(func() (*cel.Env, error) {
			return cel.NewEnv(cel.Variable(v, cel.DynType), ext.Strings(), ext.TwoVarComprehensions())
		})
	}
	return out
}()

// env is the environment of rules reading variable.
func env(variable string) (*cel.Env, error) {
	build, ok := envs[variable]
	if !ok {
		return nil, fmt.Errorf("no rule reads %q: a rule reads %s or %s", variable, Object, ObservedObject)
	}
	return build()
}

// Rule is a compiled expression; it is safe for concurrent use.
type Rule struct {
	variable string
	prg      cel.Program
	ast      *cel.Ast
}

// OutputError says that an expression returns a type its use cannot take.
type OutputError struct {
	// Returns is the expression's type.
	Returns *cel.Type
	// Want are the types it may return.
	Want []*cel.Type
}

func (e *OutputError) Error() string {
	want := make([]string, len(e.Want))
	for i, t := range e.Want {
		want[i] = t.String()
	}
	return fmt.Sprintf("returns %s; it must return %s", e.Returns, strings.Join(want, " or "))
}

// Compile checks expression, a rule reading variable that must return one
// of want (or a dynamic value, checked when evaluated; no want takes any
// type). An expression that
// does not parse or type-check gives an error beginning "does not
// compile", naming the variable to read when it reads another; one of
// another type an *OutputError.
func Compile(variable, expression string, want ...*cel.Type) (*Rule, error) {
	e, err := env(variable)
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(expression)
	if iss.Err() != nil {
		if other := readsOther(e, variable, expression); other != "" {
			return nil, fmt.Errorf("does not compile: the rule reads %s (%s), which is not declared here: it must read %s (%s): %v",
				other, variables[other], variable, variables[variable], iss.Err())
		}
		return nil, fmt.Errorf("does not compile: %v", iss.Err())
	}
	if out := ast.OutputType(); len(want) > 0 && !out.IsExactType(cel.DynType) && !returns(out, want) {
		return nil, &OutputError{Returns: out, Want: want}
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(interruptFrequency))
	if err != nil {
		return nil, err
	}
	return &Rule{variable: variable, prg: prg, ast: ast}, nil
}

// AST is the checked expression, for a use that can refuse some bad
// results before any evaluation (a literal it can read whole). It must not
// be modified.
func (r *Rule) AST() *cel.Ast { return r.ast }

// returns reports whether out is one of want, or assignable to it (a
// list of ints is a list).
func returns(out *cel.Type, want []*cel.Type) bool {
	for _, w := range want {
		if out.IsExactType(w) || out.IsAssignableType(w) || out.TypeName() == w.TypeName() {
			return true
		}
	}
	return false
}

// readsOther is the other variable expression reads, "" when it reads
// none (or does not parse).
func readsOther(e *cel.Env, variable, expression string) string {
	parsed, iss := e.Parse(expression)
	if iss.Err() != nil {
		return ""
	}
	found := ""
	celast.PreOrderVisit(celast.NavigateAST(parsed.NativeRep()), celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.IdentKind || found != "" {
			return
		}
		if name := x.AsIdent(); name != variable {
			if _, known := variables[name]; known {
				found = name
			}
		}
	}))
	return found
}

// Value evaluates the rule on obj and returns its result as a Go value.
func (r *Rule) Value(obj *unstructured.Unstructured) (any, error) {
	val, _, err := r.prg.Eval(map[string]any{r.variable: obj.Object})
	if err != nil {
		return nil, err
	}
	return val.Value(), nil
}

// Int evaluates the rule on obj, which must give an integer (a whole
// float counts; an unsigned one is capped at 2^31-1).
func (r *Rule) Int(obj *unstructured.Unstructured) (int64, error) {
	v, err := r.Value(obj)
	if err != nil {
		return 0, err
	}
	switch v := v.(type) {
	case int64:
		return v, nil
	case uint64:
		return int64(min(v, 1<<31-1)), nil
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	}
	return 0, fmt.Errorf("the expression returned %v, not an integer", v)
}

// Maps evaluates the rule on obj, which must give a list of maps with
// string keys.
func (r *Rule) Maps(obj *unstructured.Unstructured) ([]map[string]any, error) {
	val, _, err := r.prg.Eval(map[string]any{r.variable: obj.Object})
	if err != nil {
		return nil, err
	}
	native, err := val.ConvertToNative(reflect.TypeFor[[]map[string]any]())
	if err != nil {
		return nil, err
	}
	return native.([]map[string]any), nil
}

// JSON evaluates the rule on obj and returns its result as the values of
// an unstructured object: map[string]any, []any, string, int64, float64,
// bool and nil. They are fresh copies, never the object's own maps, so the
// caller may keep or change them; CEL's other values (bytes, timestamps,
// durations, maps with keys other than strings) are an error naming the
// value's place in the result.
func (r *Rule) JSON(obj *unstructured.Unstructured) (any, error) {
	val, _, err := r.prg.Eval(map[string]any{r.variable: obj.Object})
	if err != nil {
		return nil, err
	}
	return jsonValue(val, "the result")
}

// jsonValue copies v into the values of an unstructured object; where
// names v's place in the result for the message.
func jsonValue(v ref.Val, where string) (any, error) {
	switch v := v.(type) {
	case *types.Err:
		return nil, fmt.Errorf("%s: %w", where, v)
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return int64(v), nil
	case types.Uint:
		if uint64(v) > math.MaxInt64 {
			return nil, fmt.Errorf("%s is %d, larger than an int64", where, uint64(v))
		}
		return int64(v), nil
	case types.Double:
		return float64(v), nil
	case types.String:
		return string(v), nil
	case traits.Mapper:
		out := map[string]any{}
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			key, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("%s has the key %v, a %s: keys must be strings", where, k, k.Type())
			}
			e, err := jsonValue(v.Get(k), fmt.Sprintf("%s[%q]", where, string(key)))
			if err != nil {
				return nil, err
			}
			out[string(key)] = e
		}
		return out, nil
	case traits.Lister:
		n, ok := v.Size().(types.Int)
		if !ok {
			return nil, fmt.Errorf("%s: %v", where, v.Size())
		}
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			e, err := jsonValue(v.Get(i), fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is a %s, which an object cannot hold", where, v.Type())
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
