package interpreter

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPodComponents: for each built-in kind of several pod templates
// (its example in testdata/components), the pods its operator runs are
// told apart by the labels it writes on them, named as the kind's
// components rule names the components; a pod without such a label, or
// naming a component the workload does not have, is of none.
func TestPodComponents(t *testing.T) {
	type pod struct {
		labels map[string]string
		want   string // "": of no component
	}
	for _, tc := range []struct {
		file  string
		names []string
		pods  []pod
	}{
		{"raycluster.yaml", []string{"ray-head", "small-group", "medium-group", "tpu-group"}, []pod{
			// KubeRay labels the head's group headgroup: its node type wins.
			{map[string]string{"ray.io/cluster": "raycluster-complete", "ray.io/node-type": "head", "ray.io/group": "headgroup"}, "ray-head"},
			{map[string]string{"ray.io/node-type": "worker", "ray.io/group": "medium-group"}, "medium-group"},
			{map[string]string{"ray.io/node-type": "worker", "ray.io/group": "tpu-group"}, "tpu-group"},
			{map[string]string{"ray.io/node-type": "worker", "ray.io/group": "removed-group"}, ""},
			{map[string]string{"ray.io/node-type": "worker"}, ""},
			{map[string]string{"ray.io/node-type": "worker", "ray.io/group": ""}, ""},
			{map[string]string{"ray.io/group": "headgroup"}, ""},
			{nil, ""},
		}},
		{"rayjob.yaml", []string{"ray-head", "small-group"}, []pod{
			{map[string]string{"ray.io/node-type": "head", "ray.io/group": "headgroup"}, "ray-head"},
			{map[string]string{"ray.io/node-type": "worker", "ray.io/group": "small-group"}, "small-group"},
		}},
		{"tfjob.yaml", []string{"chief", "ps", "worker"}, []pod{
			// The training operator marks the chief job-role=master too.
			{map[string]string{"training.kubeflow.org/replica-type": "chief", "training.kubeflow.org/job-role": "master"}, "chief"},
			{map[string]string{"training.kubeflow.org/replica-type": "ps"}, "ps"},
			{map[string]string{"training.kubeflow.org/replica-type": "worker"}, "worker"},
			{map[string]string{"training.kubeflow.org/replica-type": "evaluator"}, ""},
			{map[string]string{"training.kubeflow.org/replica-type": "Worker"}, ""},
			{map[string]string{"training.kubeflow.org/job-name": "tfjob"}, ""},
		}},
		{"pytorchjob.yaml", []string{"master", "worker"}, []pod{
			{map[string]string{"training.kubeflow.org/replica-type": "master", "training.kubeflow.org/job-role": "master"}, "master"},
			{map[string]string{"training.kubeflow.org/replica-type": "worker"}, "worker"},
		}},
		{"mpijob.yaml", []string{"launcher", "worker"}, []pod{
			// The MPI operator writes the role, no replica type.
			{map[string]string{"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-role": "launcher"}, "launcher"},
			{map[string]string{"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-role": "worker"}, "worker"},
			// The training operator's MPIJob controller, the replica type.
			{map[string]string{"training.kubeflow.org/operator-name": "mpijob-controller", "training.kubeflow.org/replica-type": "launcher"}, "launcher"},
		}},
		{"volcano-job.yaml", []string{"ps", "worker"}, []pod{
			{map[string]string{"volcano.sh/job-name": "tf-job", "volcano.sh/task-spec": "ps"}, "ps"},
			{map[string]string{"volcano.sh/task-spec": "worker"}, "worker"},
			{map[string]string{"volcano.sh/task-spec": "evaluator"}, ""},
			{map[string]string{"volcano.sh/job-name": "tf-job"}, ""},
		}},
		{"flinkdeployment.yaml", []string{"jobmanager", "taskmanager"}, []pod{
			{map[string]string{"app": "basic-example", "type": "flink-native-kubernetes", "component": "jobmanager"}, "jobmanager"},
			{map[string]string{"type": "flink-standalone-kubernetes", "component": "taskmanager"}, "taskmanager"},
			{map[string]string{"app": "basic-example"}, ""},
		}},
		{"sparkapplication.yaml", []string{"driver", "executor"}, []pod{
			{map[string]string{"sparkoperator.k8s.io/app-name": "spark-pi", "spark-role": "driver"}, "driver"},
			{map[string]string{"spark-role": "executor"}, "executor"},
			{map[string]string{"sparkoperator.k8s.io/app-name": "spark-pi"}, ""},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			names, of, ok := New().PodComponents(loadComponentsExample(t, tc.file))
			if !ok {
				t.Fatal("PodComponents = false")
			}
			if !slices.Equal(names, tc.names) {
				t.Errorf("names %q, want %q", names, tc.names)
			}
			for _, p := range tc.pods {
				if got := of(p.labels); got != p.want {
					t.Errorf("pod %v: component %q, want %q", p.labels, got, p.want)
				}
			}
		})
	}
}

// TestPodComponentsNone: kinds whose pods are not told apart, and
// workloads whose components cannot be read, have no PodComponents.
func TestPodComponentsNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"nil object", nil},
		{"Deployment: its pods are counted together", parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {selector: {matchLabels: {app: web}}}
`)},
		{"a kind Shepherd does not know", parse(t, `
apiVersion: example.io/v1
kind: Widget
metadata: {name: w}
`)},
		{"a RayCluster without its head: no components", parse(t, `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec: {workerGroupSpecs: [{groupName: a}]}
`)},
		{"a RayJob on an existing cluster: none of its own", parse(t, `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: j}
spec: {entrypoint: python x.py, clusterSelector: {ray.io/cluster: shared}}
`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if names, of, ok := New().PodComponents(tc.obj); ok || names != nil || of != nil {
				t.Fatalf("PodComponents = %q, %v, %v; want none", names, of != nil, ok)
			}
		})
	}
}
