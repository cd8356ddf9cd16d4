package celrule

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(fields map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: fields}
}

// Every bad rule is refused, saying why: it does not parse, reads a
// variable it may not (the other one named with the one to read), or
// returns a type its use cannot take (named with the types it may).
func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, variable, expression string
		want                       []*cel.Type
		says                       []string
		output                     bool // an *OutputError
	}{
		{"does not parse", Object, "object.spec.replicas +", []*cel.Type{cel.IntType},
			[]string{"does not compile", "Syntax error"}, false},
		{"an undeclared variable", Object, "unknownVar == 1", []*cel.Type{cel.BoolType},
			[]string{"does not compile", "undeclared reference"}, false},
		{"a health rule reading the template", ObservedObject, "object.status.ready == true", []*cel.Type{cel.BoolType},
			[]string{"does not compile", "reads object (the template)", "it must read observedObj (the member object)"}, false},
		{"a template rule reading the member object", Object, "observedObj.spec.replicas", []*cel.Type{cel.IntType},
			[]string{"does not compile", "reads observedObj", "it must read object (the template)"}, false},
		{"a variable no rule reads", "obj", "obj.spec", nil,
			[]string{`no rule reads "obj"`, "object or observedObj"}, false},
		{"a string for an int", Object, "'three'", []*cel.Type{cel.IntType},
			[]string{"returns string; it must return int"}, true},
		{"a bool for a list", Object, "object.metadata.name == 'x'", []*cel.Type{cel.ListType(cel.DynType)},
			[]string{"returns bool; it must return list(dyn)"}, true},
		{"an int for a string or a bool", ObservedObject, "1 + 2", []*cel.Type{cel.StringType, cel.BoolType},
			[]string{"returns int; it must return string or bool"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.variable, tc.expression, tc.want...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			var out *OutputError
			if errors.As(err, &out) != tc.output {
				t.Errorf("an *OutputError: %v, want %v", !tc.output, tc.output)
			}
		})
	}
}

// A rule returns what it is asked to, or a dynamic value (a field of the
// object), whose type is checked when evaluated.
func TestCompileAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, variable, expression string
		want                       []*cel.Type
	}{
		{"an int", Object, "object.spec.replicas + 1", []*cel.Type{cel.IntType}},
		{"a field, dynamic", Object, "object.spec.replicas", []*cel.Type{cel.IntType}},
		{"a list of maps for a list", Object, "[{'kind': 'ConfigMap'}]", []*cel.Type{cel.ListType(cel.DynType)}},
		{"a bool among string and bool", ObservedObject, "observedObj.status.ready == true", []*cel.Type{cel.StringType, cel.BoolType}},
		{"ext.Strings", ObservedObject, "observedObj.metadata.name.lowerAscii()", []*cel.Type{cel.StringType}},
		{"ext.TwoVarComprehensions", Object, "object.spec.groups.transformList(i, g, {'path': '/spec/groups/' + string(i)})", []*cel.Type{cel.ListType(cel.DynType)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compile(tc.variable, tc.expression, tc.want...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The evaluation helpers read the rule's variable and check the result.
func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name, expression string
		eval             func(*Rule) (any, error)
		want             any
		err              string
	}{
		{"an int", "object.spec.replicas * 2", asInt, int64(6), ""},
		{"a whole double is an int", "double(object.spec.replicas)", asInt, int64(3), ""},
		{"an unsigned int", "uint(object.spec.replicas)", asInt, int64(3), ""},
		{"a fraction is no int", "object.spec.half", asInt, nil, "returned 1.5, not an integer"},
		{"a string is no int", "object.spec.name", asInt, nil, "not an integer"},
		{"a missing field", "object.spec.none", asInt, nil, "no such key"},
		{"a list of maps", "[{'name': object.spec.name}]", asMaps, []map[string]any{{"name": "x"}}, ""},
		{"an element's index", "[object.spec.name, 'y'].transformList(i, v, {'at': i})", asMaps, []map[string]any{{"at": int64(0)}, {"at": int64(1)}}, ""},
		{"a list of strings is no list of maps", "['x']", asMaps, nil, "map"},
		{"a raw value", "object.spec.name + '!'", asValue, "x!", ""},
		{"JSON values of literals and fields", "[{'name': object.spec.name, 'n': 1, 'u': uint(2), 'f': 1.5, 'l': [true, null], 'spec': object.spec}]", asJSON,
			[]any{map[string]any{"name": "x", "n": int64(1), "u": int64(2), "f": 1.5, "l": []any{true, nil},
				"spec": map[string]any{"replicas": int64(3), "half": 1.5, "name": "x"}}}, ""},
		{"JSON keys must be strings", "[{'ok': {1: 'a'}}]", asJSON, nil, `the result[0]["ok"] has the key 1, a int: keys must be strings`},
		{"JSON holds no bytes", "{'b': b'x'}", asJSON, nil, `the result["b"] is a bytes, which an object cannot hold`},
		{"JSON holds no timestamps", "[timestamp('2020-01-01T00:00:00Z')]", asJSON, nil, "the result[0] is a google.protobuf.Timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compile(Object, tc.expression)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.eval(r)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "" && !reflect.DeepEqual(got, tc.want):
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

var evalObject = obj(map[string]any{"spec": map[string]any{"replicas": int64(3), "half": 1.5, "name": "x"}})

// The helpers under test, on evalObject.
func asInt(r *Rule) (any, error)   { return r.Int(evalObject) }
func asMaps(r *Rule) (any, error)  { return r.Maps(evalObject) }
func asValue(r *Rule) (any, error) { return r.Value(evalObject) }
func asJSON(r *Rule) (any, error)  { return r.JSON(evalObject) }

// JSON's maps are copies: changing them leaves the object as it was.
func TestJSONCopies(t *testing.T) {
	r, err := Compile(Object, "object.spec")
	if err != nil {
		t.Fatal(err)
	}
	o := obj(map[string]any{"spec": map[string]any{"list": []any{"a"}}})
	got, err := r.JSON(o)
	if err != nil {
		t.Fatal(err)
	}
	got.(map[string]any)["list"].([]any)[0] = "changed"
	got.(map[string]any)["added"] = true
	if want := map[string]any{"list": []any{"a"}}; !reflect.DeepEqual(o.Object["spec"], want) {
		t.Errorf("the object changed: %v, want %v", o.Object["spec"], want)
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int
	}{
		{"short stays", "short", 5},
		{"at the limit stays", strings.Repeat("x", 4096), 4096},
		{"longer is cut with an ellipsis", strings.Repeat("x", 5000), 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in)
			if len(got) != tc.want || len(tc.in) > 4096 && !strings.HasSuffix(got, "...") {
				t.Errorf("Truncate: %d characters (%q...)", len(got), got[:min(len(got), 10)])
			}
		})
	}
}
