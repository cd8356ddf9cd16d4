package interpreter

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
)

const componentsField = "spec.customizations.components.expression"

func componentsCustomization(expression string) *configv1alpha1.ResourceInterpreterCustomization {
	c := customization(configv1alpha1.Customizations{Components: &configv1alpha1.ComponentCustomization{Expression: expression}})
	c.Name = "rollout-parts"
	return c
}

// literalList is a literal list of n components with distinct names.
func literalList(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("{'name': 'c%d', 'replicas': 1}", i)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// What a components expression shows before any object is read is refused
// when it is written, naming the field and the component.
func TestComponentsRefusedAtAdmission(t *testing.T) {
	for _, tc := range []struct {
		name, expression string
		says             string
	}{
		{"does not parse", "object.spec.parts +", "does not compile"},
		{"reads the member object", "observedObj.spec.parts", "it must read object (the template)"},
		{"not a list", "'parts'", "returns string; it must return list(dyn)"},
		{"negative replicas", "[{'name': 'a', 'replicas': -1}]", `component [0] "a" has -1 replicas; it must have 0 or more`},
		{"negative replicas, written as a negation", "[{'name': 'a', 'replicas': -(1)}]", `component [0] "a" has -1 replicas`},
		{"a fraction of a replica", "[{'name': 'a', 'replicas': 1.5}]", `component [0] "a" has the replicas 1.5, not an int`},
		{"replicas that are no number", "[{'name': 'a', 'replicas': 'three'}]", `component [0] "a" has the replicas three, not an int`},
		{"no replicas", "[{'name': 'a', 'podSpec': object.spec.template.spec}]", `component [0] "a" has no replicas`},
		{"an empty name", "[{'name': '', 'replicas': 1}]", "component [0] has no name"},
		{"no name", "[{'replicas': 1}]", "component [0] has no name"},
		{"a name that is no string", "[{'name': 7, 'replicas': 1}]", "component [0] has the name 7, not a string"},
		{"a name twice", "[{'name': 'a', 'replicas': 1}, {'name': 'b', 'replicas': 1}, {'name': 'a', 'replicas': 2}]",
			`component [2] "a" has the name of component [0]; names must be unique`},
		{"an unknown key", "[{'name': 'a', 'replicas': 1, 'podspec': object.spec.template.spec}]", `component [0] "a" has the key "podspec"`},
		{"a component that is no map", "[{'name': 'a', 'replicas': 1}, 'b']", "component [1] is b, not a map"},
		{"too many components", literalList(MaxComponents + 1), "returns 33 components, more than 32"},
		{"in a branch of a conditional", "has(object.spec.parts) ? object.spec.parts : [{'name': 'a', 'replicas': -2}]",
			`component [0] "a" has -2 replicas`},
		{"divisible that is no bool", "[{'name': 'a', 'replicas': 1, 'divisible': 'yes'}]", `component [0] "a" has divisible yes, not a bool`},
		{"divisible as a number", "[{'name': 'a', 'replicas': 1, 'divisible': 1}]", `component [0] "a" has divisible 1, not a bool`},
		{"a replicasPath that is no string", "[{'name': 'a', 'replicas': 1, 'replicasPath': 3}]", `component [0] "a" has the replicasPath 3, not a string`},
		{"a replicasPath without its leading /", "[{'name': 'a', 'replicas': 1, 'replicasPath': 'spec/replicas'}]",
			`component [0] "a": replicasPath "spec/replicas" is not a JSON pointer: it must start with /`},
		{"a replicasPath with an empty key", "[{'name': 'a', 'replicas': 1, 'replicasPath': '/spec//replicas'}]", `replicasPath "/spec//replicas" is not a JSON pointer to a field`},
		{"a replicasPath with a bad escape", "[{'name': 'a', 'replicas': 1, 'replicasPath': '/spec/a~2b'}]", `"a~2b" escapes badly`},
		{"the whole object as replicasPath", "[{'name': 'a', 'replicas': 1, 'replicasPath': '/'}]", `replicasPath "/" is not a JSON pointer to a field`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := CompileCustomization(componentsCustomization(tc.expression))
			if len(errs) == 0 {
				t.Fatal("accepted")
			}
			got := errs.ToAggregate().Error()
			for _, w := range []string{componentsField, tc.says} {
				if !strings.Contains(got, w) {
					t.Errorf("error %q lacks %q", got, w)
				}
			}
		})
	}
	// The largest literal list, and lists built from the object, pass.
	for _, ok := range []string{literalList(MaxComponents), "object.spec.parts.map(p, {'name': p.name, 'replicas': p.count})",
		"[{'name': 'a', 'replicas': 0}, {'name': 'b', 'replicas': 2.0, 'replicaRequirements': {'resourceRequest': {'cpu': '1'}}}]",
		"[{'name': 'a', 'replicas': 1, 'divisible': false, 'replicasPath': '/spec/a~1b/replicas'}]",
		"object.spec.parts.transformList(i, p, {'name': p.name, 'replicas': p.count, 'divisible': true, 'replicasPath': '/spec/parts/' + string(i) + '/count'})"} {
		if _, errs := CompileCustomization(componentsCustomization(ok)); len(errs) > 0 {
			t.Errorf("%s refused: %v", ok, errs.ToAggregate())
		}
	}
}

// Each bad result of an evaluation is an error naming the workload, the
// rule and the component; a good one is read as the built-in rules'.
func TestComponentsEvaluated(t *testing.T) {
	const byParts = "object.spec.parts.map(p, {'name': p.name, 'replicas': p.count, 'podSpec': p.template.spec})"
	part := func(name string, count any) map[string]any {
		return map[string]any{"name": name, "count": count, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}}}}}}}
	}
	parts := func(ps ...map[string]any) map[string]any {
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = p
		}
		return map[string]any{"parts": out}
	}
	many := make([]map[string]any, MaxComponents+1)
	for i := range many {
		many[i] = part(fmt.Sprintf("p%d", i), int64(1))
	}
	for _, tc := range []struct {
		name, expression string
		spec             map[string]any
		want             []want
		says             string
	}{
		{"pod specs read as a template's", byParts, parts(part("head", int64(1)), part("workers", int64(4))),
			[]want{{name: "head", replicas: 1, cpu: "500m", memory: "1Gi"}, {name: "workers", replicas: 4, cpu: "500m", memory: "1Gi"}}, ""},
		{"Karmada's replicaRequirements", "[{'name': 'jm', 'replicas': 1, 'replicaRequirements': {'resourceRequest': {'cpu': 2, 'memory': '4Gi'}, 'priorityClassName': 'high'}}, {'name': 'idle', 'replicas': 0, 'replicaRequirements': {'resourceRequest': {'cpu': '0'}}}]",
			map[string]any{}, []want{{name: "jm", replicas: 1, cpu: "2", memory: "4Gi"}, {name: "idle", replicas: 0}}, ""},
		{"none", "[]", map[string]any{}, []want{}, ""},
		{"negative replicas", byParts, parts(part("workers", int64(-1))), nil, `component [0] "workers" has -1 replicas; it must have 0 or more`},
		{"replicas past int32", byParts, parts(part("workers", int64(3_000_000_000))), nil, `component [0] "workers" has 3000000000 replicas; it must have 0 to 2147483647`},
		{"replicas that are no number", byParts, parts(part("workers", "four")), nil, `component [0] "workers" has the replicas four, not an int`},
		{"a name twice", byParts, parts(part("a", int64(1)), part("a", int64(2))), nil, `component [1] "a" has the name of component [0]`},
		{"an empty name", byParts, parts(part("", int64(1))), nil, "component [0] has no name"},
		{"too many components", byParts, parts(many...), nil, `33 components, more than 32: component [32] "p32" is one too many`},
		{"a podSpec that is no pod spec", "[{'name': 'a', 'replicas': 1, 'podSpec': object.spec.bad}]", map[string]any{"bad": map[string]any{"containers": int64(3)}},
			nil, `component [0] "a": podSpec:`},
		{"both podSpec and replicaRequirements", "[{'name': 'a', 'replicas': 1, 'podSpec': {}, 'replicaRequirements': {}}]", map[string]any{},
			nil, `component [0] "a" has both podSpec and replicaRequirements; give one`},
		{"Karmada's nodeClaim", "[{'name': 'a', 'replicas': 1, 'replicaRequirements': {'nodeClaim': {}}}]", map[string]any{},
			nil, `component [0] "a": replicaRequirements: the key "nodeClaim" is not read`},
		{"a negative request", "[{'name': 'a', 'replicas': 1, 'replicaRequirements': {'resourceRequest': {'cpu': '-1'}}}]", map[string]any{},
			nil, "resourceRequest cpu is -1; a request is 0 or more"},
		{"a field missing", "[{'name': 'a', 'replicas': object.spec.count}]", map[string]any{}, nil, "evaluating the expression: no such key: count"},
		{"an element that is no map", "object.spec.parts", map[string]any{"parts": []any{"a"}}, nil, "component [0] is a, not a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := CompileCustomization(componentsCustomization(tc.expression))
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			in := New()
			in.SetCustom(c.GVK, c.Custom)
			got, err := in.Components(rollout(tc.spec))
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				compareComponents(t, got, tc.want)
				return
			}
			if err == nil {
				t.Fatalf("no error; components %+v", got)
			}
			for _, w := range []string{"Rollout ns/r: components: " + componentsField + ` of ResourceInterpreterCustomization "rollout-parts": `, tc.says} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A customization's components rule is laid over the built-in one, and
// clearing it brings the built-in one back; it teaches an unknown kind
// components without giving it replicas.
func TestComponentsLayers(t *testing.T) {
	ray := loadComponentsExample(t, "raycluster.yaml")
	gvk := ray.GroupVersionKind()
	ric := componentsCustomization("[{'name': 'everything', 'replicas': 1}]")
	ric.Spec.Target = configv1alpha1.HealthTarget{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	c, errs := CompileCustomization(ric)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := New()
	in.SetCustom(c.GVK, c.Custom)
	if got, err := in.Components(ray); err != nil || len(got) != 1 || got[0].Name != "everything" {
		t.Errorf("with the customization: %+v %v", got, err)
	}
	in.ClearCustom(c.GVK)
	if got, err := in.Components(ray); err != nil || len(got) != 4 || got[0].Name != rayHead {
		t.Errorf("the built-in rule back: %+v %v", got, err)
	}
	c, errs = CompileCustomization(componentsCustomization("[{'name': 'a', 'replicas': 3}]"))
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	widget := schema.GroupKind{Group: "example.io", Kind: "Rollout"}
	if in.HasComponents(widget) {
		t.Fatal("an unknown kind has components")
	}
	in.SetCustom(c.GVK, c.Custom)
	if !in.HasComponents(widget) {
		t.Error("the customization taught no components")
	}
	if n, req, err := in.Replicas(rollout(nil)); n != 0 || req != nil || err != nil {
		t.Errorf("Replicas = %d %v %v: components alone give no replicas", n, req, err)
	}
}

// The example of docs/interpreter.md compiles and reads its workload.
func TestComponentsExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "interpreter")
	data, err := os.ReadFile(filepath.Join(dir, "components-customization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.UnmarshalStrict(data, ric); err != nil {
		t.Fatal(err)
	}
	c, errs := CompileCustomization(ric)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in := New()
	in.SetCustom(c.GVK, c.Custom)
	data, err = os.ReadFile(filepath.Join(dir, "trainingjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The file holds the namespace, then the TrainingJob.
	docs := strings.Split(string(data), "\n---\n")
	got, err := in.Components(parse(t, docs[len(docs)-1]))
	if err != nil {
		t.Fatal(err)
	}
	compareComponents(t, got, []want{{name: "coordinator", replicas: 1, cpu: "500m", memory: "1Gi"},
		{name: "trainer", replicas: 4, cpu: "2", memory: "8Gi", other: "nvidia.com/gpu", otherQuantity: "1"}})
}
