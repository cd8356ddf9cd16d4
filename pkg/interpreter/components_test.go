package interpreter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// want is a component as a test expects it: its name, replicas and what
// one replica requests ("" for nothing).
type want struct {
	name          string
	replicas      int32
	cpu, memory   string
	other         corev1.ResourceName
	otherQuantity string
}

// checkComponents compares got with want, requests by value.
func compareComponents(t *testing.T, got []Component, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d components %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Replicas != w.replicas {
			t.Errorf("component [%d] = %q with %d replicas, want %q with %d", i, g.Name, g.Replicas, w.name, w.replicas)
		}
		var request corev1.ResourceList
		if g.Requirements != nil {
			request = g.Requirements.ResourceRequest
		}
		for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: w.cpu, corev1.ResourceMemory: w.memory, w.other: w.otherQuantity} {
			if name == "" {
				continue
			}
			got, found := request[name]
			switch {
			case q == "" && found:
				t.Errorf("component %q requests %s %s, want none", w.name, got.String(), name)
			case q != "" && (!found || got.Cmp(resource.MustParse(q)) != 0):
				t.Errorf("component %q requests %s %s, want %s", w.name, got.String(), name, q)
			}
		}
	}
}

// TestBuiltinComponents reads each kind's example (testdata/components,
// shaped like its operator's published one) and asserts its components.
func TestBuiltinComponents(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []want
	}{
		{"raycluster.yaml", []want{
			{name: "ray-head", replicas: 1, cpu: "500m", memory: "1Gi"},
			{name: "small-group", replicas: 3, cpu: "200m", memory: "512Mi"},
			{name: "medium-group", replicas: 10, cpu: "1", memory: "2Gi"},                                          // 12, past maxReplicas
			{name: "tpu-group", replicas: 4, cpu: "4", memory: "8Gi", other: "google.com/tpu", otherQuantity: "4"}, // 2 replicas of 2 hosts
		}},
		{"rayjob.yaml", []want{
			{name: "ray-head", replicas: 1, cpu: "200m"},
			{name: "small-group", replicas: 1, cpu: "200m"},
		}},
		{"tfjob.yaml", []want{
			{name: "chief", replicas: 1, cpu: "500m", memory: "1Gi"},
			{name: "ps", replicas: 2, cpu: "1", memory: "2Gi"},
			{name: "worker", replicas: 4, cpu: "2", memory: "4Gi"},
		}},
		{"pytorchjob.yaml", []want{
			{name: "master", replicas: 1, cpu: "1", memory: "2Gi"},
			{name: "worker", replicas: 3, cpu: "2", memory: "4Gi", other: "nvidia.com/gpu", otherQuantity: "1"},
		}},
		{"mpijob.yaml", []want{
			{name: "launcher", replicas: 1, cpu: "1", memory: "1Gi"},
			{name: "worker", replicas: 2, cpu: "2", memory: "2Gi"},
		}},
		{"volcano-job.yaml", []want{
			{name: "ps", replicas: 1, cpu: "1", memory: "1Gi"},
			{name: "worker", replicas: 2, cpu: "2", memory: "2Gi"},
		}},
		{"flinkdeployment.yaml", []want{
			// The resource field sizes the main container; the sidecar of
			// the shared template adds its own request.
			{name: "jobmanager", replicas: 1, cpu: "1100m", memory: "2112Mi"},
			// parallelism 4 over 2 slots a TaskManager.
			{name: "taskmanager", replicas: 2, cpu: "2100m", memory: "4160Mi"},
		}},
		{"sparkapplication.yaml", []want{
			// 512m and Spark's least overhead, 384Mi.
			{name: "driver", replicas: 1, cpu: "1", memory: "896Mi"},
			// 2g and the larger of 10% and 384Mi.
			{name: "executor", replicas: 2, cpu: "2", memory: "2432Mi"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			obj := loadComponentsExample(t, tc.file)
			in := New()
			if !in.HasComponents(obj.GroupVersionKind().GroupKind()) {
				t.Fatalf("%s has no components rule", obj.GetKind())
			}
			got, err := in.Components(obj)
			if err != nil {
				t.Fatal(err)
			}
			compareComponents(t, got, tc.want)
			// Placed as one object: no replicas to divide.
			if n, req, err := in.Replicas(obj); n != 0 || req != nil || err != nil {
				t.Errorf("Replicas = %d %+v %v, want 0 and nil", n, req, err)
			}
		})
	}
}

func loadComponentsExample(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "components", file))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(data))
}

// Every test of a rule reads its kind's defaults and clamps as its
// operator applies them.
func TestBuiltinComponentRules(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []want
	}{
		{"ray: replicas raised to minReplicas; min above max gives max; unset replicas are 0", `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: head}]}}}
  workerGroupSpecs:
  - {groupName: raised, replicas: 1, minReplicas: 3, template: {spec: {containers: [{name: w}]}}}
  - {groupName: inverted, replicas: 1, minReplicas: 5, maxReplicas: 2, template: {spec: {containers: [{name: w}]}}}
  - {groupName: unset, template: {spec: {containers: [{name: w}]}}}
  - {groupName: none, replicas: 4, numOfHosts: 0}
`, []want{{name: "ray-head", replicas: 1}, {name: "raised", replicas: 3}, {name: "inverted", replicas: 2},
			{name: "unset", replicas: 0}, {name: "none", replicas: 0}}},
		{"ray job on an existing cluster has none", `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: j}
spec: {entrypoint: python x.py, clusterSelector: {ray.io/cluster: shared}}
`, []want{}},
		{"mpi: Worker defaults to 0, Launcher to 1", `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: m}
spec: {mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: l}]}}}, Worker: {template: {spec: {containers: [{name: w}]}}}}}
`, []want{{name: "launcher", replicas: 1}, {name: "worker", replicas: 0}}},
		{"volcano: an unnamed task is default<index>", `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec: {tasks: [{name: a, replicas: 2}, {replicas: 3}]}
`, []want{{name: "a", replicas: 2}, {name: "default1", replicas: 3}}},
		{"flink: a session cluster without a job starts no TaskManager; Flink's default CPUs", `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: f}
spec:
  flinkConfiguration: {taskmanager.numberOfTaskSlots: "4"}
  jobManager: {resource: {memory: 1g}}
  taskManager: {resource: {memory: 2Gi}}
`, []want{{name: "jobmanager", replicas: 1, cpu: "1", memory: "1Gi"}, {name: "taskmanager", replicas: 0, cpu: "4", memory: "2Gi"}}},
		{"flink: taskManager.replicas wins over parallelism; resources over resource; the role's template over the shared one", `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: f}
spec:
  podTemplate: {spec: {containers: [{name: flink-main-container, resources: {requests: {memory: 9Gi}}}, {name: side, resources: {requests: {cpu: 1}}}]}}
  jobManager:
    replicas: 2
    resource: {cpu: 0.5, memory: 1.5g}
  taskManager:
    replicas: 3
    resources: {limits: {cpu: 3, memory: 6Gi}}
    resource: {cpu: 1, memory: 1g}
    podTemplate: {spec: {containers: [{name: side, resources: {requests: {cpu: 250m}}}]}}
  job: {parallelism: 100}
`, []want{{name: "jobmanager", replicas: 2, cpu: "1500m", memory: "1.5G"}, {name: "taskmanager", replicas: 3, cpu: "3250m", memory: "6Gi"}}},
		{"spark: Python overhead, explicit overhead, coreRequest, GPU, sidecars and dynamic allocation", `
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  type: Python
  dynamicAllocation: {enabled: true, initialExecutors: 3, minExecutors: 2, maxExecutors: 10}
  driver:
    coreRequest: 500m
    memory: "2048"
    memoryOverhead: 1g
    sidecars: [{name: proxy, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
  executor:
    cores: 4
    memory: 10g
    gpu: {name: nvidia.com/gpu, quantity: 1}
    priorityClassName: batch
`, []want{{name: "driver", replicas: 1, cpu: "600m", memory: "3172Mi"},
			{name: "executor", replicas: 3, cpu: "4", memory: "14Gi", other: "nvidia.com/gpu", otherQuantity: "1"}}},
		{"spark: defaults: 1 core, 1g, one executor; the template's first container is the main one", `
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  type: Java
  driver: {template: {spec: {containers: [{name: custom, resources: {requests: {ephemeral-storage: 1Gi}}}]}}}
  executor: {}
`, []want{{name: "driver", replicas: 1, cpu: "1", memory: "1408Mi", other: "ephemeral-storage", otherQuantity: "1Gi"},
			{name: "executor", replicas: 1, cpu: "1", memory: "1408Mi"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New().Components(parse(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			compareComponents(t, got, tc.want)
		})
	}
}

// A template its operator would refuse, or that no rule can read, is an
// error naming the workload, the rule, the field and what to do.
func TestBuiltinComponentErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		says      []string
	}{
		{"a Ray cluster without a head", "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r, namespace: ml}, spec: {workerGroupSpecs: []}}",
			[]string{"RayCluster ml/r: components: the built-in rule for ray.io/v1 RayCluster", "spec.headGroupSpec is missing", "give its template"}},
		{"a worker group without a name", "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r}, spec: {headGroupSpec: {}, workerGroupSpecs: [{replicas: 1}]}}",
			[]string{"spec.workerGroupSpecs[0].groupName is empty", "name it"}},
		{"two worker groups of one name", "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r}, spec: {headGroupSpec: {}, workerGroupSpecs: [{groupName: a}, {groupName: a}]}}",
			[]string{`component [2] "a" has the name of component [1]`, "must be unique"}},
		{"negative replicas", "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r}, spec: {headGroupSpec: {}, workerGroupSpecs: [{groupName: a, replicas: -2, minReplicas: -5}]}}",
			[]string{`component [1] "a" has -2 replicas`, "0 or more"}},
		{"replicas that are no number", "{apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: t}, spec: {tfReplicaSpecs: {Worker: {replicas: two}}}}",
			[]string{"spec.tfReplicaSpecs.Worker.replicas is two, not an integer"}},
		{"a TFJob without replicas", "{apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: t}, spec: {}}",
			[]string{"spec.tfReplicaSpecs is missing", "Chief, PS, Worker, Evaluator"}},
		{"a Volcano Job without tasks", "{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, metadata: {name: v}, spec: {}}",
			[]string{"the built-in rule for batch.volcano.sh/v1alpha1 Job", "spec.tasks is missing"}},
		{"a pod template that is no pod spec", "{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, metadata: {name: v}, spec: {tasks: [{name: a, template: {spec: {containers: 3}}}]}}",
			[]string{"spec.tasks[0].template.spec"}},
		{"Flink memory in no syntax", "{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, metadata: {name: f}, spec: {jobManager: {resource: {memory: lots}}}}",
			[]string{"spec.jobManager.resource.memory", `"lots" is neither Flink's memory syntax`}},
		{"Flink task slots of 0", "{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, metadata: {name: f}, spec: {flinkConfiguration: {taskmanager.numberOfTaskSlots: '0'}, job: {parallelism: 2}}}",
			[]string{"taskmanager.numberOfTaskSlots is 0", "1 slot or more"}},
		{"Spark memory in no syntax", "{apiVersion: sparkoperator.k8s.io/v1beta2, kind: SparkApplication, metadata: {name: s}, spec: {executor: {memory: 1.5g}}}",
			[]string{"spec.executor.memory", `"1.5g" is not a JVM memory size`}},
		{"Spark overhead factor in no syntax", "{apiVersion: sparkoperator.k8s.io/v1beta2, kind: SparkApplication, metadata: {name: s}, spec: {memoryOverheadFactor: much}}",
			[]string{"spec.memoryOverheadFactor is \"much\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Components(parse(t, tc.doc))
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

// checkComponents refuses each bad result, naming the component.
func TestCheckComponents(t *testing.T) {
	many := make([]Component, MaxComponents+1)
	for i := range many {
		many[i] = Component{Name: strings.Repeat("c", i+1), Replicas: 1}
	}
	for _, tc := range []struct {
		name string
		cs   []Component
		says string // "" when valid
	}{
		{"none", nil, ""},
		{"the most", many[:MaxComponents], ""},
		{"one too many", many, `33 components, more than 32: component [32] "` + many[32].Name + `" is one too many`},
		{"no name", []Component{{Name: "a"}, {Replicas: 1}}, "component [1] has no name"},
		{"a name twice", []Component{{Name: "a"}, {Name: "b"}, {Name: "a"}}, `component [2] "a" has the name of component [0]`},
		{"negative replicas", []Component{{Name: "a", Replicas: -1}}, `component [0] "a" has -1 replicas; it must have 0 or more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkComponents(tc.cs)
			switch {
			case tc.says == "" && err != nil:
				t.Fatal(err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
				t.Fatalf("error %v, want one saying %q", err, tc.says)
			}
		})
	}
}

// Kinds without a components rule, built-in or unknown, have none: they
// are placed as one object.
func TestNoComponents(t *testing.T) {
	in := New()
	for _, doc := range []string{
		"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 2}}",
		"{apiVersion: example.io/v1, kind: Widget, metadata: {name: w}, spec: {workers: [{name: a}]}}",
	} {
		obj := parse(t, doc)
		if in.HasComponents(obj.GroupVersionKind().GroupKind()) {
			t.Errorf("%s has components", obj.GetKind())
		}
		if cs, err := in.Components(obj); cs != nil || err != nil {
			t.Errorf("%s: Components = %v %v, want nil", obj.GetKind(), cs, err)
		}
	}
}

func TestFlinkMemory(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2048m", "2Gi"}, {"1g", "1Gi"}, {"1G", "1Gi"}, {"512 mb", "512Mi"}, {"1024", "1Ki"}, {"2 gibibytes", "2Gi"},
		{"2Gi", "2Gi"}, {"2gi", "2Gi"}, {"1.5g", "1.5G"}, {"3GB", "3Gi"}, {"100k", "100Ki"},
	} {
		got, err := flinkMemory(tc.in)
		if err != nil || got.Cmp(resource.MustParse(tc.want)) != 0 {
			t.Errorf("flinkMemory(%q) = %s %v, want %s", tc.in, got.String(), err, tc.want)
		}
	}
	if _, err := flinkMemory("-1g"); err == nil {
		t.Error("a negative size was read")
	}
}

func TestSparkMiB(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"512m", 512}, {"512", 512}, {"2g", 2048}, {"2G", 2048}, {"1gb", 1024}, {"1t", 1 << 20}, {"2048k", 2}, {"1000k", 0}, {"5b", 0}} {
		if got, err := sparkMiB(tc.in, ""); err != nil || got != tc.want {
			t.Errorf("sparkMiB(%q) = %d %v, want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"1.5g", "lots", "-1g", "99999999999p"} {
		if _, err := sparkMiB(bad, ""); err == nil {
			t.Errorf("sparkMiB(%q) read", bad)
		}
	}
}

// The built-in table and the kinds agree: each kind of components is a
// built-in kind of its apiVersion's group, known by its components only.
func TestComponentKinds(t *testing.T) {
	for gk, c := range componentKinds {
		k := builtin[gk]
		if k == nil || k.components == nil || k.apiVersion != c.apiVersion {
			t.Errorf("%v: not a built-in kind of components", gk)
			continue
		}
		if gv, err := schema.ParseGroupVersion(c.apiVersion); err != nil || gv.Group != gk.Group {
			t.Errorf("%v: apiVersion %q is not of its group", gk, c.apiVersion)
		}
		if k.replicas != nil || k.podSpec != nil || k.health != nil || len(k.names) > 0 {
			t.Errorf("%v: known by more than its components", gk)
		}
	}
}
