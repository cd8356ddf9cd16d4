// Package custom turns ResourceInterpreterCustomization objects into
// run-time knowledge of a kind: CEL expressions over the template
// (`object`) for its replicas and dependencies, JSON pointers for its
// replica, pod spec and retained fields, the summed status fields, and a
// health rule over the member object (`observedObj`, as in a
// HealthInterpreter). Compile checks everything once, at admission
// (Validate, served by package admission's webhook) and again in the
// controller, which hands the result to the process's interpreter
// (Layered.SetCustom).
//
// HealthInterpreters are the same thing with one operation, health, and
// a higher layer (Layered.SetHealthRule): CompileHealthInterpreter, one
// controller implementation (Reconciler) and one webhook check serve
// both CRDs.
package custom

import (
	"fmt"
	"reflect"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/health/expr"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// VariableName is the variable template expressions read the template from.
const VariableName = "object"

// costLimit bounds one evaluation, as for health rules.
const costLimit = 1_000_000

var env = mustEnv()

func mustEnv() *celgo.Env {
	e, err := celgo.NewEnv(celgo.Variable(VariableName, celgo.DynType), ext.Strings())
	if err != nil {
		panic(err)
	}
	return e
}

// Compiled is a customization (or a HealthInterpreter) ready to use.
type Compiled struct {
	GVK    schema.GroupVersionKind
	Custom *interpreter.Custom
}

// Compile checks c and builds what it says. Every problem is returned,
// each naming its field, the value and the fix.
func Compile(c *configv1alpha1.ResourceInterpreterCustomization) (*Compiled, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	gv, err := schema.ParseGroupVersion(c.Spec.Target.APIVersion)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("target", "apiVersion"), c.Spec.Target.APIVersion, "must be GROUP/VERSION or VERSION, e.g. example.io/v1"))
	}
	out := &Compiled{GVK: gv.WithKind(c.Spec.Target.Kind), Custom: &interpreter.Custom{}}
	cs := &c.Spec.Customizations
	p := spec.Child("customizations")
	if r := cs.Replicas; r != nil {
		rp := p.Child("replicas")
		prg, err := program(r.Expression, celgo.IntType)
		if err != nil {
			errs = append(errs, field.Invalid(rp.Child("expression"), r.Expression, err.Error()))
		} else {
			out.Custom.Replicas = func(obj *unstructured.Unstructured) (int64, error) { return evalInt(prg, obj) }
		}
		errs = append(errs, pointer(rp.Child("replicasPath"), r.ReplicasPath, &out.Custom.ReplicasPath)...)
		if r.PodSpecPath != "" {
			errs = append(errs, pointer(rp.Child("podSpecPath"), r.PodSpecPath, &out.Custom.PodSpec)...)
		}
	}
	if a := cs.StatusAggregation; a != nil {
		out.Custom.Summed = append([]string(nil), a.SummedFields...)
	}
	if d := cs.Dependencies; d != nil {
		prg, err := program(d.Expression, celgo.ListType(celgo.DynType))
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("dependencies", "expression"), d.Expression, err.Error()))
		} else {
			out.Custom.Dependencies = func(obj *unstructured.Unstructured) ([]interpreter.Dependency, error) {
				return evalDependencies(prg, obj)
			}
		}
	}
	if r := cs.Retention; r != nil {
		for i, path := range r.Paths {
			var fp []string
			if e := pointer(p.Child("retention", "paths").Index(i), path, &fp); len(e) > 0 {
				errs = append(errs, e...)
				continue
			}
			out.Custom.Retain = append(out.Custom.Retain, fp)
		}
	}
	out.Custom.ObservesGeneration = cs.ObservesGeneration
	out.Custom.Sensitive = ptr.Deref(cs.Sensitive, false)
	if h := cs.Health; h != nil {
		hi, err := expr.Compile(h.Expression)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("health", "expression"), h.Expression,
				fmt.Sprintf("does not compile: %v; fix the CEL expression over observedObj", err)))
		} else {
			out.Custom.Health = hi.Interpret
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// pointer parses a JSON pointer into *dst.
func pointer(p *field.Path, value string, dst *[]string) field.ErrorList {
	fp, ok := interpreter.FieldPath(value)
	if !ok {
		return field.ErrorList{field.Invalid(p, value, "must be a JSON pointer to a field, e.g. /spec/replicas")}
	}
	*dst = fp
	return nil
}

// program compiles expr, which must return want (or a dynamic value).
func program(expr string, want *celgo.Type) (celgo.Program, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("does not compile: %v", iss.Err())
	}
	if out := ast.OutputType(); !out.IsExactType(celgo.DynType) && !out.IsAssignableType(want) && out.TypeName() != want.TypeName() {
		return nil, fmt.Errorf("returns %s; it must return %s", out, want)
	}
	return env.Program(ast, celgo.CostLimit(costLimit), celgo.InterruptCheckFrequency(100))
}

func evalInt(prg celgo.Program, obj *unstructured.Unstructured) (int64, error) {
	val, _, err := prg.Eval(map[string]any{VariableName: obj.Object})
	if err != nil {
		return 0, err
	}
	switch v := val.Value().(type) {
	case int64:
		return v, nil
	case uint64:
		return int64(min(v, 1<<31-1)), nil
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	}
	return 0, fmt.Errorf("the expression returned %v, not an integer", val.Value())
}

func evalDependencies(prg celgo.Program, obj *unstructured.Unstructured) ([]interpreter.Dependency, error) {
	val, _, err := prg.Eval(map[string]any{VariableName: obj.Object})
	if err != nil {
		return nil, err
	}
	native, err := val.ConvertToNative(reflect.TypeFor[[]map[string]any]())
	if err != nil {
		return nil, fmt.Errorf("the expression must return a list of maps with apiVersion, kind and name: %w", err)
	}
	var out []interpreter.Dependency
	for i, m := range native.([]map[string]any) {
		d := interpreter.Dependency{}
		for key, dst := range map[string]*string{"apiVersion": &d.APIVersion, "kind": &d.Kind, "name": &d.Name} {
			s, ok := m[key].(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("dependency [%d] has no %s", i, key)
			}
			*dst = s
		}
		out = append(out, d)
	}
	return out, nil
}

// CompileHealthInterpreter checks hi and builds its health rule, as
// Compile does for a customization's health operation. Each error names
// the field, the value and what to do.
func CompileHealthInterpreter(hi *configv1alpha1.HealthInterpreter) (*Compiled, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	gv, err := schema.ParseGroupVersion(hi.Spec.Target.APIVersion)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("target", "apiVersion"), hi.Spec.Target.APIVersion,
			"must be GROUP/VERSION or VERSION, e.g. apps/v1 or v1"))
	}
	rule, err := expr.Compile(hi.Spec.Health.Expression)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("health", "expression"), hi.Spec.Health.Expression,
			fmt.Sprintf("does not compile: %v; fix the CEL expression (see docs/failover.md#health-interpreters-in-cel)", err)))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Compiled{GVK: gv.WithKind(hi.Spec.Target.Kind), Custom: &interpreter.Custom{Health: rule.Interpret}}, nil
}
