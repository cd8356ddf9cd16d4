package interpreter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestGetReplicas(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		replicas int32
		request  corev1.ResourceList
		priority string
	}{{
		name: "deployment sums containers, init at max, limit as request",
		doc: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  template:
    spec:
      priorityClassName: high
      initContainers:
      - {name: init, resources: {requests: {cpu: "2"}}}
      containers:
      - {name: a, resources: {requests: {cpu: 500m, memory: 128Mi}}}
      - {name: b, resources: {limits: {cpu: 250m, memory: 64Mi}}}
`,
		replicas: 6,
		request:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("192Mi")},
		priority: "high",
	}, {
		name:     "deployment without replicas defaults to 1",
		doc:      "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: c}]}}}}",
		replicas: 1,
	}, {
		name:     "statefulset scaled to zero",
		doc:      "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {replicas: 0, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}}",
		replicas: 0,
		request:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}, {
		name:     "job parallelism capped by completions",
		doc:      "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 5, completions: 3, template: {spec: {containers: [{name: c}]}}}}",
		replicas: 3,
	}, {
		name:     "job without parallelism runs one pod",
		doc:      "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {completions: 8, template: {spec: {containers: [{name: c}]}}}}",
		replicas: 1,
	}, {
		name:     "pod is one replica with overhead",
		doc:      "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {overhead: {memory: 10Mi}, containers: [{name: c, resources: {requests: {memory: 90Mi}}}]}}",
		replicas: 1,
		request:  corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
	}, {
		name: "configmap has no replicas",
		doc:  "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replicas, req, err := New().Replicas(parse(t, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if replicas != tt.replicas {
				t.Errorf("replicas = %d, want %d", replicas, tt.replicas)
			}
			var want *workv1alpha1.ReplicaRequirements
			if tt.request != nil || tt.priority != "" {
				want = &workv1alpha1.ReplicaRequirements{ResourceRequest: tt.request, PriorityClassName: tt.priority}
			}
			if !equality.Semantic.DeepEqual(req, want) {
				t.Errorf("requirements = %+v, want %+v", req, want)
			}
		})
	}
}

func TestReviseReplicas(t *testing.T) {
	targets := []workv1alpha1.TargetCluster{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}}
	tests := []struct {
		name  string
		doc   string
		field []string
		want  map[string]int64
		check []string // a field that must be the same in every copy
	}{
		{name: "deployment", doc: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 3}}",
			field: []string{"spec", "replicas"}, want: map[string]int64{"a": 1, "b": 2}},
		{name: "job parallelism", doc: "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 3, completions: 10}}",
			field: []string{"spec", "parallelism"}, want: map[string]int64{"a": 1, "b": 2}},
		{name: "job completions", doc: "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 3, completions: 10}}",
			field: []string{"spec", "completions"}, want: map[string]int64{"a": 3, "b": 7}},
		{name: "configmap unchanged", doc: "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}",
			check: []string{"data", "k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, tt.doc)
			orig := obj.DeepCopy()
			out, err := New().ReviseReplicas(obj, targets)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(obj, orig) {
				t.Fatal("Divide modified its input")
			}
			for cluster, want := range tt.want {
				got, _, _ := unstructured.NestedInt64(out[cluster].Object, tt.field...)
				if got != want {
					t.Errorf("%s: %v = %d, want %d", cluster, tt.field, got, want)
				}
			}
			if tt.check != nil {
				for cluster, m := range out {
					if v, _, _ := unstructured.NestedString(m.Object, tt.check...); v != "v" {
						t.Errorf("%s: %v = %q", cluster, tt.check, v)
					}
				}
			}
		})
	}
}
