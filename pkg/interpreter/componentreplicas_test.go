package interpreter

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// workerPool is a workload of a head and worker groups, with the group
// counts given (int64 as the API server decodes them, or anything else a
// test wants to hold there).
func workerPool(counts ...any) *unstructured.Unstructured {
	groups := make([]any, len(counts))
	for i, n := range counts {
		groups[i] = map[string]any{"name": []string{"cpu", "gpu", "spot"}[i], "replicas": n}
	}
	return rollout(map[string]any{"head": map[string]any{"replicas": int64(1)}, "workerGroups": groups})
}

// byGroups reads a WorkerPool: its head, not divisible, and each worker
// group, divisible, every one with the pointer of its replicas.
const byGroups = "[{'name': 'head', 'replicas': 1, 'replicasPath': '/spec/head/replicas'}] + " +
	"object.spec.workerGroups.transformList(i, g, {'name': g.name, 'replicas': g.replicas, 'divisible': true, " +
	"'replicasPath': '/spec/workerGroups/' + string(i) + '/replicas'})"

// A rule's divisible and replicasPath are read with its components, and a
// replicasPath is checked against the object: a pointer, naming an
// integer field, holding the component's replicas. Each error names the
// component, the pointer and the fix.
func TestComponentsDivisible(t *testing.T) {
	type got struct {
		name      string
		divisible bool
		path      string
	}
	for _, tc := range []struct {
		name, expression string
		obj              *unstructured.Unstructured
		want             []got
		says             string
	}{
		{"read with the components", byGroups, workerPool(int64(4), int64(2)),
			[]got{{"head", false, "/spec/head/replicas"}, {"cpu", true, "/spec/workerGroups/0/replicas"}, {"gpu", true, "/spec/workerGroups/1/replicas"}}, ""},
		{"a whole number read from JSON", byGroups, workerPool(float64(3)), []got{{"head", false, "/spec/head/replicas"}, {"cpu", true, "/spec/workerGroups/0/replicas"}}, ""},
		{"neither given", "[{'name': 'a', 'replicas': 2}]", workerPool(), []got{{"a", false, ""}}, ""},
		{"divisible without replicasPath", "[{'name': 'a', 'replicas': 2, 'divisible': true}]", workerPool(), []got{{"a", true, ""}}, ""},
		{"an escaped key", "[{'name': 'a', 'replicas': 2, 'replicasPath': '/spec/a~1b'}]", rollout(map[string]any{"a/b": int64(2)}), []got{{"a", false, "/spec/a~1b"}}, ""},
		{"a pointer built badly", "[{'name': 'a', 'replicas': 1, 'replicasPath': object.spec.path}]", rollout(map[string]any{"path": "spec/replicas"}),
			nil, `component [0] "a": replicasPath "spec/replicas" is not a JSON pointer: it must start with /; give the JSON pointer of the integer field`},
		{"a pointer that is no string", "[{'name': 'a', 'replicas': 1, 'replicasPath': object.spec.path}]", rollout(map[string]any{"path": int64(7)}),
			nil, `component [0] "a" has the replicasPath 7, not a string`},
		{"divisible that is no bool", "[{'name': 'a', 'replicas': 1, 'divisible': object.spec.flag}]", rollout(map[string]any{"flag": "yes"}),
			nil, `component [0] "a" has divisible yes, not a bool`},
		{"a pointer past the list", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workerGroups/2/replicas'}]", workerPool(int64(1)),
			nil, `component [0] "w": replicasPath "/spec/workerGroups/2/replicas" names nothing in the object (/spec/workerGroups holds no "2")`},
		{"a pointer to a missing key", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workers/replicas'}]", workerPool(int64(1)),
			nil, `names nothing in the object (/spec holds no "workers")`},
		{"a list index with a leading zero", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workerGroups/00/replicas'}]", workerPool(int64(1)),
			nil, `/spec/workerGroups holds no "00"`},
		{"a pointer to an object", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workerGroups/0'}]", workerPool(int64(1)),
			nil, `component [0] "w": replicasPath "/spec/workerGroups/0" holds an object, not an integer`},
		{"a pointer to a string", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workerGroups/0/name'}]", workerPool(int64(1)),
			nil, `holds a string, not an integer`},
		{"a pointer to a fraction", "[{'name': 'w', 'replicas': 1, 'replicasPath': '/spec/workerGroups/0/replicas'}]", workerPool(1.5),
			nil, `replicasPath "/spec/workerGroups/0/replicas" holds 1.5, not an integer`},
		{"a value that is not the replicas", "[{'name': 'w', 'replicas': 3, 'replicasPath': '/spec/workerGroups/0/replicas'}]", workerPool(int64(4)),
			nil, `component [0] "w": replicasPath "/spec/workerGroups/0/replicas" holds 4, not the component's 3 replicas; point it at the field the replicas are read from`},
		{"a pointer to the wrong group", byGroups[:strings.Index(byGroups, " + ")] + " + [{'name': 'gpu', 'replicas': object.spec.workerGroups[1].replicas, 'replicasPath': '/spec/workerGroups/0/replicas'}]",
			workerPool(int64(4), int64(2)), nil, `component [1] "gpu": replicasPath "/spec/workerGroups/0/replicas" holds 4, not the component's 2 replicas`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := CompileCustomization(componentsCustomization(tc.expression))
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			in := New()
			in.SetCustom(c.GVK, c.Custom)
			cs, err := in.Components(tc.obj)
			if tc.says != "" {
				if err == nil {
					t.Fatalf("no error; components %+v", cs)
				}
				for _, w := range []string{`components: ` + componentsField + ` of ResourceInterpreterCustomization "rollout-parts": `, tc.says} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out []got
			for _, c := range cs {
				out = append(out, got{c.Name, c.Divisible, c.ReplicasPath})
			}
			if !reflect.DeepEqual(out, tc.want) {
				t.Errorf("components %+v, want %+v", out, tc.want)
			}
			// The binding carries what the rule says.
			for i, bc := range BindingComponents(cs) {
				if bc.Divisible != cs[i].Divisible || bc.ReplicasPath != cs[i].ReplicasPath {
					t.Errorf("binding component %+v of %+v", bc, cs[i])
				}
			}
		})
	}
}

// No built-in kind's component is divisible, nor has a replicasPath:
// docs/scheduling.md says why none may be divided over clusters.
func TestBuiltinComponentsAreNotDivisible(t *testing.T) {
	for _, file := range []string{"raycluster.yaml", "rayjob.yaml", "tfjob.yaml", "pytorchjob.yaml", "mpijob.yaml", "volcano-job.yaml", "flinkdeployment.yaml", "sparkapplication.yaml"} {
		cs, err := New().Components(loadComponentsExample(t, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Divisible || c.ReplicasPath != "" {
				t.Errorf("%s: component %q is divisible %v with replicasPath %q", file, c.Name, c.Divisible, c.ReplicasPath)
			}
		}
	}
	if len(componentKinds) != 8 {
		t.Errorf("%d built-in kinds of components; docs/scheduling.md's table of kinds that are not divided lists 8", len(componentKinds))
	}
}

// Each cluster's copy of a divided workload gets its share of each
// component at its replicasPath, 0 for the components it does not run;
// the template is not changed.
func TestReviseComponents(t *testing.T) {
	components := []workv1alpha1.Component{
		{Name: "head", Replicas: 1, ReplicasPath: "/spec/head/replicas"},
		{Name: "cpu", Replicas: 4, Divisible: true, ReplicasPath: "/spec/workerGroups/0/replicas"},
		{Name: "gpu", Replicas: 2, Divisible: true, ReplicasPath: "/spec/workerGroups/1/replicas"},
	}
	targets := []workv1alpha1.TargetCluster{
		{Name: "a", Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "cpu", Replicas: 3}}},
		{Name: "b", Components: []workv1alpha1.TargetComponent{{Name: "cpu", Replicas: 1}, {Name: "gpu", Replicas: 2}}},
		{Name: "c"}, // listed, running nothing: every component at 0
	}
	tmpl := workerPool(int64(4), int64(2))
	before := tmpl.DeepCopy()
	out, err := ReviseComponents(tmpl, components, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]int64{"a": {1, 3, 0}, "b": {0, 1, 2}, "c": {0, 0, 0}}
	if len(out) != len(want) {
		t.Fatalf("copies for %d clusters, want %d", len(out), len(want))
	}
	for cluster, w := range want {
		m := out[cluster]
		head, _, _ := unstructured.NestedInt64(m.Object, "spec", "head", "replicas")
		groups, _, _ := unstructured.NestedSlice(m.Object, "spec", "workerGroups")
		got := [3]int64{head, groups[0].(map[string]any)["replicas"].(int64), groups[1].(map[string]any)["replicas"].(int64)}
		if got != w {
			t.Errorf("%s: head, cpu, gpu = %v, want %v", cluster, got, w)
		}
		if groups[1].(map[string]any)["name"] != "gpu" {
			t.Errorf("%s: the rest of the group changed: %v", cluster, groups[1])
		}
	}
	if !reflect.DeepEqual(tmpl, before) {
		t.Error("the template was changed")
	}

	for _, tc := range []struct {
		name string
		path string
		says string
	}{
		{"no replicasPath", "", `component "gpu" has no replicasPath`},
		{"a pointer to nothing", "/spec/workerGroups/5/replicas", `component "gpu": replicasPath "/spec/workerGroups/5/replicas" names nothing in the template`},
		{"a pointer to an object", "/spec/workerGroups/1", `component "gpu": replicasPath "/spec/workerGroups/1" holds an object in the template, not an integer`},
		{"no pointer", "spec/x", `component "gpu": replicasPath "spec/x" is not a JSON pointer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := append([]workv1alpha1.Component(nil), components...)
			bad[2].ReplicasPath = tc.path
			if _, err := ReviseComponents(tmpl, bad, targets); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want one saying %q", err, tc.says)
			}
		})
	}
}

// The WorkerPool example of docs/interpreter.md compiles and reads its
// workload: a coordinator, not divisible, and a divisible worker group,
// each with the pointer of its replicas; the refused example is refused.
func TestWorkerPoolExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "interpreter")
	compile := func(file string) (*Compiled, error) {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		ric := &configv1alpha1.ResourceInterpreterCustomization{}
		if err := yaml.UnmarshalStrict(data, ric); err != nil {
			t.Fatal(err)
		}
		c, errs := CompileCustomization(ric)
		return c, errs.ToAggregate()
	}
	c, err := compile("workerpool-customization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := New()
	in.SetCustom(c.GVK, c.Custom)
	data, err := os.ReadFile(filepath.Join(dir, "workerpool.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	cs, err := in.Components(parse(t, docs[len(docs)-1]))
	if err != nil {
		t.Fatal(err)
	}
	compareComponents(t, cs, []want{{name: "coordinator", replicas: 1, cpu: "2", memory: "2Gi"}, {name: "render", replicas: 10, cpu: "2", memory: "4Gi"}})
	if cs[0].Divisible || cs[0].ReplicasPath != "/spec/coordinator/replicas" || !cs[1].Divisible || cs[1].ReplicasPath != "/spec/workerGroups/0/replicas" {
		t.Errorf("components %+v", cs)
	}
	if _, err := compile("workerpool-customization-refused.yaml"); err == nil || !strings.Contains(err.Error(), `replicasPath "spec/coordinator/replicas" is not a JSON pointer`) {
		t.Errorf("the refused example: %v", err)
	}
}
