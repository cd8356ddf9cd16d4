package convert

import (
	"fmt"
	"reflect"
	"strings"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
)

// This file converts ResourceInterpreterCustomization. Karmada writes each
// operation as a Lua script; Shepherd's are CEL expressions, paths and
// field lists, checked when written. No Lua is translated: each operation
// becomes Shepherd's with a placeholder the API server refuses (so that an
// unfinished customization can never take over a kind), and the script is
// kept in an annotation beside it for the user to rewrite.

// Placeholder marks what the user must write. It is not CEL, nor a JSON
// pointer, nor a field name, so the API server refuses it wherever it is.
const Placeholder = "TODO(shepherd convert)"

// LuaAnnotationPrefix prefixes the annotations that keep Karmada's scripts,
// one per operation: convert.shepherd.io/lua-healthInterpretation.
const LuaAnnotationPrefix = "convert.shepherd.io/lua-"

const kindCustomization = "ResourceInterpreterCustomization"

func init() {
	register(kindCustomization, kind{
		karmada: KarmadaConfigGroup, shepherd: ShepherdConfigGroup,
		typ:    reflect.TypeFor[configv1alpha1.ResourceInterpreterCustomization](),
		decode: decoder[configv1alpha1.ResourceInterpreterCustomization](),
		rules:  customizationRules,
		check:  placeholderCheck,
	})
}

// luaOperation is how one of Karmada's operations becomes Shepherd's.
type luaOperation struct {
	// into is Shepherd's operation, "" for none.
	into string
	// skeleton returns Shepherd's operation with placeholders.
	skeleton func(annotation string) map[string]any
}

func expression(what string) func(string) map[string]any {
	return func(a string) map[string]any {
		return map[string]any{"expression": fmt.Sprintf("%s: write in CEL %s, as the Lua script in annotation %s did", Placeholder, what, a)}
	}
}

var luaOperations = map[string]luaOperation{
	"replicaResource": {into: "replicas", skeleton: func(a string) map[string]any {
		return map[string]any{
			"expression":   fmt.Sprintf("%s: write in CEL the replicas of object, as the Lua script in annotation %s did", Placeholder, a),
			"replicasPath": Placeholder + ": the JSON pointer a cluster's share is written to, e.g. /spec/replicas",
		}
	}},
	"replicaRevision": {into: "replicas", skeleton: func(string) map[string]any {
		return map[string]any{
			"expression":   Placeholder + ": write in CEL the replicas of object",
			"replicasPath": Placeholder + ": the JSON pointer the Lua script of replicaRevision writes a cluster's share to, e.g. /spec/replicas",
		}
	}},
	"componentResource": {into: "components", skeleton: expression("the components of object (a list of {name, replicas, podSpec})")},
	"statusAggregation": {into: "statusAggregation", skeleton: func(string) map[string]any {
		return map[string]any{"summedFields": []any{Placeholder + ": the integer fields of .status to sum"}}
	}},
	"healthInterpretation":     {into: "health", skeleton: expression("the health of observedObj")},
	"dependencyInterpretation": {into: "dependencies", skeleton: expression("the dependencies of object")},
	"retention": {into: "retention", skeleton: func(string) map[string]any {
		return map[string]any{"paths": []any{Placeholder + ": the JSON pointers of the fields the member's controllers own"}}
	}},
	"statusReflection": {},
}

func customizationRules(o *object) {
	spec := nested(o.obj, "spec")
	karmada := nested(spec, "customizations")
	if karmada == nil {
		return
	}
	out := map[string]any{}
	for _, op := range sortedKeys(karmada) {
		path := "spec.customizations." + op
		lo, known := luaOperations[op]
		if !known {
			o.note(path, "unknown-field", "Karmada's customizations have no such operation: dropped")
			continue
		}
		script := str(nested(karmada, op), "luaScript")
		annotation := LuaAnnotationPrefix + op
		setAnnotation(o.obj, annotation, script)
		if lo.into == "" {
			o.note(path, "lua-status-reflection",
				"Shepherd has no equivalent of statusReflection: dropped (the script is kept in annotation %s)", annotation)
			continue
		}
		if _, done := out[lo.into]; !done {
			out[lo.into] = lo.skeleton(annotation)
		}
		o.note(path+".luaScript", "lua-to-cel",
			"Shepherd's rules are CEL, not Lua: spec.customizations.%s holds placeholders (%q) that the API server refuses until you write them; the script is kept in annotation %s",
			lo.into, Placeholder, annotation)
	}
	spec["customizations"] = out
	if len(out) == 0 {
		o.note("spec.customizations", "nothing-to-customize", "no operation Shepherd has is left: not converted")
	}
}

// placeholderCheck reports, on a customization in Shepherd's group (such
// as the output of an earlier run), the placeholders still to write.
func placeholderCheck(o *object) {
	c := nested(o.obj, "spec", "customizations")
	for _, op := range sortedKeys(c) {
		m, _ := c[op].(map[string]any)
		for _, f := range sortedKeys(m) {
			var values []any
			switch v := m[f].(type) {
			case string:
				values = []any{v}
			case []any:
				values = v
			}
			for _, v := range values {
				if s, _ := v.(string); strings.Contains(s, Placeholder) {
					o.note("spec.customizations."+op+"."+f, "lua-to-cel", "still a placeholder: write it (see the annotations %s*)", LuaAnnotationPrefix)
					break
				}
			}
		}
	}
}

func setAnnotation(obj map[string]any, key, value string) {
	md := nested(obj, "metadata")
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	a, _ := md["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
		md["annotations"] = a
	}
	a[key] = value
}
