package interpreter

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/celrule"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// ResourceInterpreterCustomizations are run-time knowledge of a kind: CEL
// expressions over the template (`object`) for its replicas, components
// (componentrule.go) and dependencies, JSON pointers for its replica, pod spec and retained
// fields, the summed status fields, and a health rule over the member
// object (`observedObj`, as in a HealthInterpreter). CompileCustomization
// checks everything once, at admission (ValidateCustomization, served by
// package admission's webhook) and again in the controller (package
// controllers/customization), which hands the result to the process's
// interpreter (Layered.SetCustom).
//
// HealthInterpreters are the same thing with one operation, health, and
// a higher layer (Layered.SetHealthRule): CompileHealthInterpreter, one
// controller implementation and one webhook check serve both CRDs.

// Compiled is a customization (or a HealthInterpreter) ready to use.
type Compiled struct {
	GVK    schema.GroupVersionKind
	Custom *Custom
}

// CompileCustomization checks c and builds what it says. Every problem is
// returned, each naming its field, the value and the fix.
func CompileCustomization(c *configv1alpha1.ResourceInterpreterCustomization) (*Compiled, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	gv, err := schema.ParseGroupVersion(c.Spec.Target.APIVersion)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("target", "apiVersion"), c.Spec.Target.APIVersion, "must be GROUP/VERSION or VERSION, e.g. example.io/v1"))
	}
	out := &Compiled{GVK: gv.WithKind(c.Spec.Target.Kind), Custom: &Custom{}}
	cs := &c.Spec.Customizations
	p := spec.Child("customizations")
	if r := cs.Replicas; r != nil {
		rp := p.Child("replicas")
		rule, err := celrule.Compile(celrule.Object, r.Expression, cel.IntType)
		if err != nil {
			errs = append(errs, field.Invalid(rp.Child("expression"), r.Expression, err.Error()))
		} else {
			out.Custom.Replicas = rule.Int
		}
		errs = append(errs, pointer(rp.Child("replicasPath"), r.ReplicasPath, &out.Custom.ReplicasPath)...)
		if r.PodSpecPath != "" {
			errs = append(errs, pointer(rp.Child("podSpecPath"), r.PodSpecPath, &out.Custom.PodSpec)...)
		}
	}
	if cc := cs.Components; cc != nil {
		list, err := compileComponents(p.Child("components", "expression"), cc.Expression, c.Name)
		if err != nil {
			errs = append(errs, err)
		} else {
			out.Custom.Components = list
		}
	}
	if a := cs.StatusAggregation; a != nil {
		out.Custom.Summed = append([]string(nil), a.SummedFields...)
	}
	if d := cs.Dependencies; d != nil {
		rule, err := celrule.Compile(celrule.Object, d.Expression, cel.ListType(cel.DynType))
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("dependencies", "expression"), d.Expression, err.Error()))
		} else {
			out.Custom.Dependencies = func(obj *unstructured.Unstructured) ([]Dependency, error) {
				return evalDependencies(rule, obj)
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
	out.Custom.Sensitive = cs.Sensitive != nil && *cs.Sensitive
	if h := cs.Health; h != nil {
		health, err := compileHealthRule(h.Expression)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("health", "expression"), h.Expression,
				err.Error()+"; fix the CEL expression over observedObj"))
		} else {
			out.Custom.Health = health
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// pointer parses a JSON pointer into *dst.
func pointer(p *field.Path, value string, dst *[]string) field.ErrorList {
	fp, err := jsonpointer.ParseField(value)
	if err != nil {
		return field.ErrorList{field.Invalid(p, value, err.Error()+"; give a JSON pointer to a field, e.g. /spec/replicas")}
	}
	*dst = fp
	return nil
}

// evalDependencies evaluates a dependencies expression: a list of maps,
// each with apiVersion, kind and name.
func evalDependencies(rule *celrule.Rule, obj *unstructured.Unstructured) ([]Dependency, error) {
	maps, err := rule.Maps(obj)
	if err != nil {
		return nil, fmt.Errorf("the expression must return a list of maps with apiVersion, kind and name: %w", err)
	}
	var out []Dependency
	for i, m := range maps {
		d := Dependency{}
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
// CompileCustomization does for a customization's health operation. Each
// error names the field, the value and what to do.
func CompileHealthInterpreter(hi *configv1alpha1.HealthInterpreter) (*Compiled, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	gv, err := schema.ParseGroupVersion(hi.Spec.Target.APIVersion)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("target", "apiVersion"), hi.Spec.Target.APIVersion,
			"must be GROUP/VERSION or VERSION, e.g. apps/v1 or v1"))
	}
	health, err := compileHealthRule(hi.Spec.Health.Expression)
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("health", "expression"), hi.Spec.Health.Expression,
			err.Error()+"; fix the CEL expression (see docs/failover.md#health-interpreters-in-cel)"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Compiled{GVK: gv.WithKind(hi.Spec.Target.Kind), Custom: &Custom{Health: health}}, nil
}

// ValidateCustomization returns what is wrong with c that the CRD's schema
// cannot say: expressions that do not compile or return the wrong type,
// pointers that do not point at a field, an apiVersion that does not
// parse.
func ValidateCustomization(c *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
	_, errs := CompileCustomization(c)
	return errs
}

// ValidateHealthInterpreter returns what is wrong with hi that the CRD's
// schema cannot say: whether its expression compiles, and whether its
// apiVersion parses.
func ValidateHealthInterpreter(hi *configv1alpha1.HealthInterpreter) field.ErrorList {
	_, errs := CompileHealthInterpreter(hi)
	return errs
}
