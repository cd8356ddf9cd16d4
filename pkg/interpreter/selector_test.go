package interpreter

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestPodSelector: each kind's rule selects the pods its controller or
// operator runs for the object, labelled as that operator labels them,
// and not those of another object; bad input (no selector, no name, a
// missing status field, a value no label can carry, a kind without a
// rule) selects nothing rather than every pod of the namespace.
func TestPodSelector(t *testing.T) {
	obj := func(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"namespace": "ns"}}}
		if name != "" {
			u.SetName(name)
		}
		for k, v := range fields {
			u.Object[k] = v
		}
		return u
	}
	spec := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"spec": m}
	}
	match := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	rayJob := func(status map[string]any, specFields ...any) *unstructured.Unstructured {
		fields := spec(append([]any{"entrypoint", "python run.py"}, specFields...)...)
		if status != nil {
			fields["status"] = status
		}
		return obj("ray.io/v1", "RayJob", "train", fields)
	}
	// What the operators write on a pod of the object "train" (or,
	// for a RayJob, of its RayCluster "train-x7k2p").
	var (
		rayPod     = labels.Set{"ray.io/cluster": "train", "ray.io/node-type": "worker", "ray.io/group": "gpu"}
		rayJobPod  = labels.Set{"ray.io/cluster": "train-x7k2p", "ray.io/node-type": "head", "ray.io/group": "headgroup"}
		tfPod      = labels.Set{"training.kubeflow.org/job-name": "train", "training.kubeflow.org/operator-name": "tfjob-controller", "training.kubeflow.org/replica-type": "worker"}
		pytorchPod = labels.Set{"training.kubeflow.org/job-name": "train", "training.kubeflow.org/operator-name": "pytorchjob-controller", "training.kubeflow.org/replica-type": "master"}
		mpiPod     = labels.Set{"training.kubeflow.org/job-name": "train", "training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-role": "worker"}
		mpiV1Pod   = labels.Set{"training.kubeflow.org/job-name": "train", "training.kubeflow.org/operator-name": "mpijob-controller", "training.kubeflow.org/replica-type": "launcher"}
		volcanoPod = labels.Set{"volcano.sh/job-name": "train", "volcano.sh/task-spec": "ps", "volcano.sh/job-namespace": "ns"}
		sparkPod   = labels.Set{"sparkoperator.k8s.io/app-name": "train", "spark-role": "executor", "sparkoperator.k8s.io/launched-by-spark-operator": "true"}
		flinkPod   = labels.Set{"app": "train", "type": "flink-native-kubernetes", "component": "taskmanager"}
		flinkSAPod = labels.Set{"app": "train", "type": "flink-standalone-kubernetes", "component": "jobmanager"}
		otherApp   = labels.Set{"app": "train"} // a Deployment's pods, say
	)
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		// want is the selector; "" for none (PodSelector false).
		want string
		// selects are pods it must select, skips pods it must not.
		selects, skips []labels.Set
	}{
		{name: "deployment", obj: obj("apps/v1", "Deployment", "web", spec("selector", match)), want: "app=web",
			selects: []labels.Set{{"app": "web", "pod-template-hash": "5d4"}}, skips: []labels.Set{{"app": "db"}}},
		{name: "statefulset", obj: obj("apps/v1", "StatefulSet", "web", spec("selector", match)), want: "app=web"},
		{name: "replicaset expressions", obj: obj("apps/v1", "ReplicaSet", "web", spec("selector", map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "In", "values": []any{"web"}}}})), want: "app in (web)"},
		{name: "deployment without selector", obj: obj("apps/v1", "Deployment", "web", spec("replicas", int64(2)))},
		{name: "empty selector selects nothing here", obj: obj("apps/v1", "Deployment", "web", spec("selector", map[string]any{}))},
		{name: "malformed selector", obj: obj("apps/v1", "Deployment", "web", spec("selector", map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "Bogus"}}}))},
		{name: "selector not an object", obj: obj("apps/v1", "Deployment", "web", spec("selector", "app=web"))},

		{name: "RayCluster", obj: obj("ray.io/v1", "RayCluster", "train", spec("headGroupSpec", map[string]any{})), want: "ray.io/cluster=train",
			selects: []labels.Set{rayPod}, skips: []labels.Set{rayJobPod, {"ray.io/cluster": "train2"}}},
		{name: "RayCluster without a name", obj: obj("ray.io/v1", "RayCluster", "", spec("headGroupSpec", map[string]any{}))},
		{name: "RayCluster named beyond a label value", obj: obj("ray.io/v1", "RayCluster", strings.Repeat("r", 64), nil)},
		{name: "RayJob: its RayCluster, named in its status", obj: rayJob(map[string]any{"rayClusterName": "train-x7k2p"}),
			want: "ray.io/cluster=train-x7k2p", selects: []labels.Set{rayJobPod}, skips: []labels.Set{rayPod}},
		{name: "RayJob before its RayCluster is named", obj: rayJob(map[string]any{"jobStatus": ""})},
		{name: "RayJob without status", obj: rayJob(nil)},
		{name: "RayJob with an empty cluster name", obj: rayJob(map[string]any{"rayClusterName": ""})},
		{name: "RayJob cluster name not a string", obj: rayJob(map[string]any{"rayClusterName": int64(7)})},
		{name: "RayJob on an existing cluster runs no pods of its own",
			obj: rayJob(map[string]any{"rayClusterName": "shared"}, "clusterSelector", map[string]any{"ray.io/cluster": "shared"})},
		{name: "RayJob with an empty clusterSelector creates its cluster",
			obj: rayJob(map[string]any{"rayClusterName": "train-x7k2p"}, "clusterSelector", map[string]any{}), want: "ray.io/cluster=train-x7k2p"},

		{name: "TFJob", obj: obj("kubeflow.org/v1", "TFJob", "train", spec("tfReplicaSpecs", map[string]any{})),
			want:    "training.kubeflow.org/job-name=train,training.kubeflow.org/operator-name=tfjob-controller",
			selects: []labels.Set{tfPod}, skips: []labels.Set{pytorchPod, mpiPod}},
		{name: "PyTorchJob", obj: obj("kubeflow.org/v1", "PyTorchJob", "train", nil),
			want:    "training.kubeflow.org/job-name=train,training.kubeflow.org/operator-name=pytorchjob-controller",
			selects: []labels.Set{pytorchPod}, skips: []labels.Set{tfPod, mpiPod}},
		{name: "MPIJob, of either operator", obj: obj("kubeflow.org/v2beta1", "MPIJob", "train", nil),
			want:    "training.kubeflow.org/job-name=train,training.kubeflow.org/operator-name in (mpi-operator,mpijob-controller)",
			selects: []labels.Set{mpiPod, mpiV1Pod}, skips: []labels.Set{tfPod, pytorchPod}},
		{name: "TFJob without a name", obj: obj("kubeflow.org/v1", "TFJob", "", nil)},
		{name: "Volcano Job", obj: obj("batch.volcano.sh/v1alpha1", "Job", "train", nil), want: "volcano.sh/job-name=train",
			selects: []labels.Set{volcanoPod}, skips: []labels.Set{{"volcano.sh/job-name": "other"}, {"batch.kubernetes.io/job-name": "train"}}},
		{name: "SparkApplication", obj: obj("sparkoperator.k8s.io/v1beta2", "SparkApplication", "train", nil), want: "sparkoperator.k8s.io/app-name=train",
			selects: []labels.Set{sparkPod}, skips: []labels.Set{otherApp}},
		{name: "FlinkDeployment, native or standalone", obj: obj("flink.apache.org/v1beta1", "FlinkDeployment", "train", nil),
			want:    "app=train,type in (flink-native-kubernetes,flink-standalone-kubernetes)",
			selects: []labels.Set{flinkPod, flinkSAPod}, skips: []labels.Set{otherApp}},

		{name: "nil object"},
		{name: "ConfigMap: no rule", obj: obj("v1", "ConfigMap", "web", spec("selector", match))},
		{name: "DaemonSet: not counted", obj: obj("apps/v1", "DaemonSet", "web", spec("selector", match))},
		{name: "Job: not counted", obj: obj("batch/v1", "Job", "train", spec("selector", match))},
		{name: "a kind Shepherd does not know", obj: obj("example.io/v1", "Widget", "train", spec("selector", match))},
		{name: "a Job of another group is not a Volcano Job", obj: obj("example.io/v1", "Job", "train", nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, ok := New().PodSelector(tc.obj)
			if ok != (tc.want != "") {
				t.Fatalf("PodSelector = %v, %v; want %q", sel, ok, tc.want)
			}
			if !ok {
				return
			}
			if sel.Empty() || sel.String() != tc.want {
				t.Fatalf("selector %q, want %q", sel, tc.want)
			}
			for _, pod := range tc.selects {
				if !sel.Matches(pod) {
					t.Errorf("%s does not select the pod %v", sel, pod)
				}
			}
			for _, pod := range tc.skips {
				if sel.Matches(pod) {
					t.Errorf("%s selects the pod %v of another object", sel, pod)
				}
			}
		})
	}
}

// A customization of a kind keeps the built-in way to its pods: it says
// nothing of them.
func TestPodSelectorUnderCustomization(t *testing.T) {
	l := New()
	ray := object(schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"}, map[string]any{}, nil)
	l.SetCustom(ray.GroupVersionKind(), &Custom{ReplicasPath: []string{"spec", "replicas"}})
	if sel, ok := l.PodSelector(ray); !ok || sel.String() != "ray.io/cluster=o" {
		t.Fatalf("PodSelector = %v, %v", sel, ok)
	}
	w := object(widgetGVK, map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "w"}}}, nil)
	l.SetCustom(widgetGVK, &Custom{ReplicasPath: []string{"spec", "replicas"}})
	if sel, ok := l.PodSelector(w); ok {
		t.Fatalf("a customized kind without a pods rule: PodSelector = %v", sel)
	}
}
