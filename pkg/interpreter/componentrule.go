package interpreter

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/celrule"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// A customization's components rule is a CEL expression over the template
// (`object`) returning a list of maps, one per component:
//
//	{name: string, replicas: int, podSpec: <a pod spec>,
//	 divisible: bool, replicasPath: string}
//
// podSpec is read as Replicas reads a template's pod spec, so that a
// component's request is what kube-scheduler would reserve. A kind that
// states its pods' resources as fields of its own (no pod spec) may give
// Karmada's replicaRequirements instead: {resourceRequest: {cpu: ...,
// memory: ...}, priorityClassName: ...}. One or neither, not both.
// divisible (false when left out) says the component's replicas may run
// in several clusters, apart from the other components; replicasPath is
// the JSON pointer of the integer field holding its replicas
// (componentreplicas.go), where a cluster's share is written.
//
// What can be checked before any object is read is checked at admission
// (staticComponents): a literal list with too many components, a literal
// name empty or repeated, literal replicas below 0, a key no component
// has, a literal divisible that is no bool, a literal replicasPath that
// is no JSON pointer. The rest is checked at each evaluation
// (decodeComponent, checkComponents, checkReplicasPaths), every error
// naming the component and the rule.

// componentKeys are the keys a component map may have.
var componentKeys = []string{"name", "replicas", "podSpec", "replicaRequirements", "divisible", "replicasPath"}

// keysHelp says which keys a component has.
const keysHelp = "a component has name, replicas and podSpec or replicaRequirements, and may have divisible and replicasPath"

// componentsHelp ends the messages about the shape of the result.
const componentsHelp = "return a list of maps {name, replicas, podSpec} (or replicaRequirements instead of podSpec; divisible and replicasPath optional)"

// compileComponents compiles the components expression at p of the
// customization named customization.
func compileComponents(p *field.Path, expression, customization string) (componentsFunc, *field.Error) {
	rule, err := celrule.Compile(celrule.Object, expression, cel.ListType(cel.DynType))
	if err != nil {
		return nil, field.Invalid(p, expression, err.Error()+"; "+componentsHelp)
	}
	if err := staticComponents(rule.AST()); err != nil {
		return nil, field.Invalid(p, expression, err.Error())
	}
	name := fmt.Sprintf("%s of ResourceInterpreterCustomization %q", p, customization)
	return checked(name, func(obj *unstructured.Unstructured) ([]Component, error) {
		return evalComponents(rule, obj)
	}), nil
}

// evalComponents evaluates a components rule on obj and reads its result.
func evalComponents(rule *celrule.Rule, obj *unstructured.Unstructured) ([]Component, error) {
	v, err := rule.JSON(obj)
	if err != nil {
		return nil, fmt.Errorf("evaluating the expression: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("the expression returned %v; %s", v, componentsHelp)
	}
	out := make([]Component, 0, len(list))
	for i, e := range list {
		c, err := decodeComponent(e, i)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// decodeComponent reads the component at index i of a rule's result.
func decodeComponent(e any, i int) (Component, error) {
	m, ok := e.(map[string]any)
	if !ok {
		return Component{}, fmt.Errorf("component [%d] is %v, not a map; %s", i, e, componentsHelp)
	}
	c := Component{}
	switch name := m["name"].(type) {
	case nil:
		return Component{}, fmt.Errorf("component [%d] has no name; name each component, uniquely in the workload", i)
	case string:
		c.Name = name
	default:
		return Component{}, fmt.Errorf("component [%d] has the name %v, not a string", i, name)
	}
	at := fmt.Sprintf("component [%d] %q", i, c.Name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(componentKeys, k) {
			return Component{}, fmt.Errorf("%s has the key %q; %s", at, k, keysHelp)
		}
	}
	n, err := componentReplicas(m["replicas"])
	if err != nil {
		return Component{}, fmt.Errorf("%s %w", at, err)
	}
	c.Replicas = n
	switch d := m["divisible"].(type) {
	case nil:
	case bool:
		c.Divisible = d
	default:
		return Component{}, fmt.Errorf("%s has divisible %v, not a bool; give true for a component whose replicas may run in several clusters, apart from the others", at, d)
	}
	switch p := m["replicasPath"].(type) {
	case nil:
	case string:
		if _, err := jsonpointer.ParseField(p); err != nil {
			return Component{}, fmt.Errorf("%s: replicasPath %w; %s", at, err, replicasPathHelp)
		}
		c.ReplicasPath = p
	default:
		return Component{}, fmt.Errorf("%s has the replicasPath %v, not a string; %s", at, p, replicasPathHelp)
	}
	if m["podSpec"] != nil && m["replicaRequirements"] != nil {
		return Component{}, fmt.Errorf("%s has both podSpec and replicaRequirements; give one", at)
	}
	switch {
	case m["podSpec"] != nil:
		c.Requirements, err = componentPodSpec(m["podSpec"])
		if err != nil {
			return Component{}, fmt.Errorf("%s: podSpec: %w", at, err)
		}
	case m["replicaRequirements"] != nil:
		c.Requirements, err = componentRequirements(m["replicaRequirements"])
		if err != nil {
			return Component{}, fmt.Errorf("%s: replicaRequirements: %w", at, err)
		}
	}
	return c, nil
}

// componentReplicas reads a component's replicas: an int (a whole double,
// as a field of an object built from YAML may hold, is one) within int32.
// A negative count is returned for checkComponents to refuse.
func componentReplicas(v any) (int32, error) {
	var n int64
	switch v := v.(type) {
	case nil:
		return 0, fmt.Errorf("has no replicas; give how many pods run it (an int, 0 or more)")
	case int64:
		n = v
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v > math.MaxInt64 {
			return 0, fmt.Errorf("has the replicas %v, not an int", v)
		}
		n = int64(v)
	default:
		return 0, fmt.Errorf("has the replicas %v, not an int", v)
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("has %d replicas; it must have 0 to %d", n, math.MaxInt32)
	}
	return int32(n), nil
}

// componentPodSpec is what one pod of the pod spec v needs.
func componentPodSpec(v any) (*workv1alpha1.ReplicaRequirements, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a pod spec", v)
	}
	pod, err := decodePodSpec(m)
	if err != nil {
		return nil, err
	}
	return podRequirements(pod), nil
}

// componentRequirements reads Karmada's replicaRequirements: the
// resources one pod requests and its priority class. Karmada's nodeClaim
// and namespace are refused rather than ignored: Shepherd's placement
// does not read them, and a rule that sets them expects it to.
func componentRequirements(v any) (*workv1alpha1.ReplicaRequirements, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%v is not a map {resourceRequest, priorityClassName}", v)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "resourceRequest" && k != "priorityClassName" {
			return nil, fmt.Errorf("the key %q is not read; give resourceRequest and priorityClassName", k)
		}
	}
	r := &workv1alpha1.ReplicaRequirements{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, r); err != nil {
		return nil, err
	}
	request := corev1.ResourceList{}
	for name, q := range r.ResourceRequest {
		if q.Sign() < 0 {
			return nil, fmt.Errorf("resourceRequest %s is %s; a request is 0 or more", name, q.String())
		}
		if !q.IsZero() {
			request[name] = q
		}
	}
	if len(request) == 0 && r.PriorityClassName == "" {
		return nil, nil
	}
	r.ResourceRequest = nil
	if len(request) > 0 {
		r.ResourceRequest = request
	}
	return r, nil
}

// staticComponents refuses the bad components a rule returns whatever the
// object: those of a literal list, the rule's result or a branch of its
// conditional. An expression that builds its list otherwise is checked
// when evaluated.
func staticComponents(ast *cel.Ast) error {
	return literalComponents(ast.NativeRep().Expr())
}

func literalComponents(e celast.Expr) error {
	switch e.Kind() {
	case celast.CallKind:
		if call := e.AsCall(); call.FunctionName() == operators.Conditional {
			for _, branch := range call.Args()[1:] {
				if err := literalComponents(branch); err != nil {
					return err
				}
			}
		}
	case celast.ListKind:
		elems := e.AsList().Elements()
		if len(elems) > MaxComponents {
			return fmt.Errorf("returns %d components, more than %d; run fewer pod templates in one workload", len(elems), MaxComponents)
		}
		names := map[string]int{}
		for i, el := range elems {
			if err := literalComponent(el, i, names); err != nil {
				return err
			}
		}
	}
	return nil
}

// literalComponent checks the literal parts of the component el, at index
// i of a literal list whose literal names so far are names.
func literalComponent(el celast.Expr, i int, names map[string]int) error {
	if el.Kind() == celast.LiteralKind {
		return fmt.Errorf("component [%d] is %v, not a map; %s", i, el.AsLiteral(), componentsHelp)
	}
	if el.Kind() != celast.MapKind {
		return nil
	}
	at := fmt.Sprintf("component [%d]", i)
	entries := el.AsMap().Entries()
	keys := map[string]bool{}
	allLiteral := true
	for _, entry := range entries {
		me := entry.AsMapEntry()
		key, ok := literalString(me.Key())
		allLiteral = allLiteral && ok
		keys[key] = ok
		if !ok || key != "name" {
			continue
		}
		if me.Value().Kind() == celast.LiteralKind {
			name, ok := literalString(me.Value())
			if !ok {
				return fmt.Errorf("%s has the name %v, not a string", at, me.Value().AsLiteral())
			}
			if name == "" {
				return fmt.Errorf("%s has no name; name each component, uniquely in the workload", at)
			}
			if j, dup := names[name]; dup {
				return fmt.Errorf("component [%d] %q has the name of component [%d]; names must be unique in the workload", i, name, j)
			}
			names[name] = i
			at = fmt.Sprintf("component [%d] %q", i, name)
		}
	}
	// A map whose keys are all literal has the keys it will have.
	if allLiteral && !keys["name"] {
		return fmt.Errorf("%s has no name; name each component, uniquely in the workload", at)
	}
	if allLiteral && !keys["replicas"] {
		return fmt.Errorf("%s has no replicas; give how many pods run it (an int, 0 or more)", at)
	}
	for _, entry := range entries {
		me := entry.AsMapEntry()
		key, ok := literalString(me.Key())
		if !ok {
			continue
		}
		if !slices.Contains(componentKeys, key) {
			return fmt.Errorf("%s has the key %q; %s", at, key, keysHelp)
		}
		if err := literalFlags(me.Value(), key, at); err != nil {
			return err
		}
		if key != "replicas" {
			continue
		}
		v, negated := me.Value(), false
		if v.Kind() == celast.CallKind && v.AsCall().FunctionName() == operators.Negate && len(v.AsCall().Args()) == 1 {
			v, negated = v.AsCall().Args()[0], true
		}
		if v.Kind() != celast.LiteralKind {
			continue
		}
		switch n := v.AsLiteral().(type) {
		case types.Int:
			if negated {
				n = -n
			}
			if n < 0 {
				return fmt.Errorf("%s has %d replicas; it must have 0 or more", at, int64(n))
			}
		case types.Double:
			// A whole double is an int, as when evaluated.
			f := float64(n)
			if negated {
				f = -f
			}
			if f != math.Trunc(f) {
				return fmt.Errorf("%s has the replicas %v, not an int", at, f)
			}
			if f < 0 {
				return fmt.Errorf("%s has %v replicas; it must have 0 or more", at, f)
			}
		default:
			return fmt.Errorf("%s has the replicas %v, not an int", at, n)
		}
	}
	return nil
}

// literalFlags checks a literal divisible (a bool) and a literal
// replicasPath (a JSON pointer) of the component at.
func literalFlags(v celast.Expr, key, at string) error {
	if v.Kind() != celast.LiteralKind {
		return nil
	}
	switch key {
	case "divisible":
		if _, ok := v.AsLiteral().(types.Bool); !ok {
			return fmt.Errorf("%s has divisible %v, not a bool; give true for a component whose replicas may run in several clusters, apart from the others", at, v.AsLiteral())
		}
	case "replicasPath":
		p, ok := literalString(v)
		if !ok {
			return fmt.Errorf("%s has the replicasPath %v, not a string; %s", at, v.AsLiteral(), replicasPathHelp)
		}
		if _, err := jsonpointer.ParseField(p); err != nil {
			return fmt.Errorf("%s: replicasPath %w; %s", at, err, replicasPathHelp)
		}
	}
	return nil
}

// literalString is the string a literal expression holds.
func literalString(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}
