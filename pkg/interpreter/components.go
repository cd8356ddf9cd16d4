package interpreter

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Component is one pod template of a workload made of several (a
// RayCluster's head and worker groups, a Spark driver and its executors):
// its name in the workload, how many pods run it and what one of them
// needs: what Karmada's GetComponents returns (name, replicas,
// replicaRequirements).
type Component struct {
	// Name is the component's name, unique in the workload.
	Name string
	// Replicas is how many pods run the component's template.
	Replicas int32
	// Requirements is what one of those pods needs, computed from its pod
	// spec as Replicas computes a template's; nil when it asks for nothing.
	Requirements *workv1alpha1.ReplicaRequirements
	// Divisible: the component's replicas may run in several clusters,
	// apart from the other components. Only a customization's rule says
	// so: no built-in kind's component is (docs/scheduling.md says why).
	Divisible bool
	// ReplicasPath is the JSON pointer, in the workload, of the integer
	// field holding Replicas ("" when the rule gives none): where a
	// cluster's share is written when the components are divided
	// (ReviseComponents). The rule's result is checked against the object
	// (checkReplicasPaths).
	ReplicasPath string
}

// MaxComponents is how many components a workload may have: more is an
// error, not a truncation. The kinds Shepherd knows have a handful (a
// TFJob five); the bound keeps what a rule may return, and what a binding
// would carry, small.
const MaxComponents = 32

// BindingComponents is a binding's spec.components for cs, in their order
// (the order the scheduler takes them in); nil for none, so that a kind
// without components leaves the field out. The detector writes it, and
// `shepherd plan` reads a template's components through it as the
// scheduler will read them from the binding.
func BindingComponents(cs []Component) []workv1alpha1.Component {
	if len(cs) == 0 {
		return nil
	}
	out := make([]workv1alpha1.Component, len(cs))
	for i, c := range cs {
		out[i] = workv1alpha1.Component{Name: c.Name, Replicas: c.Replicas, Divisible: c.Divisible, ReplicasPath: c.ReplicasPath}
		if r := c.Requirements; r != nil {
			out[i].ReplicaRequirements = &workv1alpha1.ComponentReplicaRequirements{
				ResourceRequest:   r.ResourceRequest.DeepCopy(),
				PriorityClassName: r.PriorityClassName,
			}
		}
	}
	return out
}

// componentsFunc lists a workload's components.
type componentsFunc func(obj *unstructured.Unstructured) ([]Component, error)

// componentKinds are the built-in kinds made of several pod templates, by
// group and kind: the apiVersion their rule reads (every served version
// keeps its fields in the same places), the rule, in
// components_rules.go, and how to find the pods the kind's operator runs
// for one object (PodSelector), by the labels it writes on each of them:
//
//   - FlinkDeployment: app=<name>, and type flink-native-kubernetes or
//     flink-standalone-kubernetes (the operator's two modes): the
//     operator runs the cluster with the deployment's name as its
//     cluster id, which Flink labels every pod with.
//   - SparkApplication: sparkoperator.k8s.io/app-name=<name>, which the
//     operator asks spark-submit to put on the driver and the executors.
//   - Volcano Job: volcano.sh/job-name=<name>.
//   - MPIJob, TFJob, PyTorchJob: training.kubeflow.org/job-name=<name>
//     and training.kubeflow.org/operator-name, the operator's name (the
//     MPI operator's, or the training operator's MPIJob controller's).
//   - RayCluster: ray.io/cluster=<name>.
//   - RayJob: ray.io/cluster=<status.rayClusterName>: the RayCluster it
//     creates has a generated name, which its status records. A RayJob
//     with a spec.clusterSelector submits to an existing cluster, whose
//     pods are not its own: none.
//
// and which component each of those pods runs (PodComponents), by the
// label the operator names its part of the workload by, mapped to the
// names the rule gives the components:
//
//   - FlinkDeployment: component=jobmanager|taskmanager.
//   - SparkApplication: spark-role=driver|executor, which Spark writes.
//   - Volcano Job: volcano.sh/task-spec=<task name>.
//   - MPIJob, TFJob, PyTorchJob: training.kubeflow.org/replica-type, the
//     replica type in lower case (the training operator's), else
//     training.kubeflow.org/job-role=launcher|worker (the MPI
//     operator's, which writes no replica type; the training operator's
//     job-role=master marks a chief, whose replica type comes first).
//   - RayCluster, RayJob: ray.io/node-type=head is "ray-head", a worker
//     pod's ray.io/group is its worker group's groupName (KubeRay labels
//     the head ray.io/group=headgroup, which ray.io/node-type comes
//     before).
//
// Each rule returns its components in a fixed order, the one
// docs/interpreter.md gives: fixed roles first, in the order their
// operator starts them; lists in the object's order; maps by sorted key.
// kinds.go adds them to the built-in kinds.
var componentKinds = map[schema.GroupKind]struct {
	apiVersion string
	list       componentsFunc
	pods       *podsRule
	component  componentLabels
}{
	{Group: "flink.apache.org", Kind: "FlinkDeployment"}: {"flink.apache.org/v1beta1", flinkDeployment,
		byName("app", podLabel{"type", []string{"flink-native-kubernetes", "flink-standalone-kubernetes"}}), named("component")},
	{Group: "sparkoperator.k8s.io", Kind: "SparkApplication"}: {"sparkoperator.k8s.io/v1beta2", sparkApplication, byName("sparkoperator.k8s.io/app-name"),
		named("spark-role")},
	{Group: "batch.volcano.sh", Kind: "Job"}: {"batch.volcano.sh/v1alpha1", volcanoJob, byName("volcano.sh/job-name"), named("volcano.sh/task-spec")},
	{Group: "kubeflow.org", Kind: "MPIJob"}: {"kubeflow.org/v2beta1", replicaSpecs("mpiReplicaSpecs", map[string]int64{"Worker": 0}),
		kubeflowPods("mpi-operator", "mpijob-controller"), kubeflowComponent},
	{Group: "kubeflow.org", Kind: "TFJob"}:      {"kubeflow.org/v1", replicaSpecs("tfReplicaSpecs", nil), kubeflowPods("tfjob-controller"), kubeflowComponent},
	{Group: "kubeflow.org", Kind: "PyTorchJob"}: {"kubeflow.org/v1", replicaSpecs("pytorchReplicaSpecs", nil), kubeflowPods("pytorchjob-controller"), kubeflowComponent},
	{Group: "ray.io", Kind: "RayCluster"}:       {"ray.io/v1", rayCluster(false, "spec"), byName(rayClusterLabel), rayComponent},
	{Group: "ray.io", Kind: "RayJob"}: {"ray.io/v1", rayCluster(true, "spec", "rayClusterSpec"),
		&podsRule{label: rayClusterLabel, value: []string{"status", "rayClusterName"}, unless: []string{"spec", "clusterSelector"}}, rayComponent},
}

// rayClusterLabel is the label KubeRay names a pod's RayCluster by.
const rayClusterLabel = "ray.io/cluster"

// rayComponent names a Ray pod's component: the head by its node type,
// a worker by its group.
var rayComponent = componentLabels{{key: "ray.io/node-type", names: map[string]string{"head": rayHead}}, {key: "ray.io/group"}}

// kubeflowComponent names a Kubeflow job's pod's component: its replica
// type (the training operator's), else its role (the MPI operator's).
var kubeflowComponent = componentLabels{{key: "training.kubeflow.org/replica-type"}, {key: "training.kubeflow.org/job-role"}}

// kubeflowPods are the pods of a Kubeflow job (MPIJob, TFJob,
// PyTorchJob), labelled with its name and the name of one of operators:
// the operator's name tells a TFJob's pods from a PyTorchJob's of the
// same name.
func kubeflowPods(operators ...string) *podsRule {
	return byName("training.kubeflow.org/job-name", podLabel{"training.kubeflow.org/operator-name", operators})
}

// Components lists the components of a workload made of several pod
// templates, in the order of its kind's rule: a customization's, else the
// built-in one. A kind with no rule has none (nil): it is placed as one
// object, whatever it runs. An error names the workload, the rule and the
// component.
//
// Replicas does not add the components up: a kind known by its components
// alone has no replicas (0, nil), because no one count, and no one
// request, describes pods of different templates, and no field could take
// a cluster's share of them. Such a workload is placed whole.
func (l *Layered) Components(obj *unstructured.Unstructured) ([]Component, error) {
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k == nil || k.components == nil {
		return nil, nil
	}
	cs, err := k.components(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s: components: %w", obj.GetKind(), objectName(obj), err)
	}
	return cs, nil
}

// HasComponents reports whether gk's workloads are read as components
// (Components). Either way a workload of several pod templates is placed
// whole; false means Shepherd knows it only as that one object, not what
// it runs.
func (l *Layered) HasComponents(gk schema.GroupKind) bool {
	k := l.lookup(gk)
	return k != nil && k.components != nil
}

// checked returns list with its result checked (checkComponents, and
// each replicasPath against the object, checkReplicasPaths), every error
// naming rule: the one way a built-in rule and a customization's reach
// Components.
func checked(rule string, list componentsFunc) componentsFunc {
	return func(obj *unstructured.Unstructured) ([]Component, error) {
		cs, err := list(obj)
		if err == nil {
			err = checkComponents(cs)
		}
		if err == nil {
			err = checkReplicasPaths(obj, cs)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rule, err)
		}
		return cs, nil
	}
}

// checkComponents refuses what no workload can be: more than
// MaxComponents components, a component without a name or with another's,
// or with fewer than 0 replicas. The error names the component.
func checkComponents(cs []Component) error {
	if len(cs) > MaxComponents {
		return fmt.Errorf("%d components, more than %d: component [%d] %q is one too many; run fewer pod templates in one workload",
			len(cs), MaxComponents, MaxComponents, cs[MaxComponents].Name)
	}
	seen := make(map[string]int, len(cs))
	for i, c := range cs {
		if c.Name == "" {
			return fmt.Errorf("component [%d] has no name; name each component, uniquely in the workload", i)
		}
		if j, dup := seen[c.Name]; dup {
			return fmt.Errorf("component [%d] %q has the name of component [%d]; names must be unique in the workload", i, c.Name, j)
		}
		seen[c.Name] = i
		if c.Replicas < 0 {
			return fmt.Errorf("component [%d] %q has %d replicas; it must have 0 or more", i, c.Name, c.Replicas)
		}
	}
	return nil
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}
