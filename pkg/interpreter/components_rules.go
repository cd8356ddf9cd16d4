package interpreter

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// The built-in components rules of componentKinds whose components are
// pod templates (PodTemplateSpecs): each reads its kind as its operator
// does, with the defaults its CRD and controller apply, and what one pod
// needs is podRequirements of the template's pod spec, as in Replicas.
// The rules of kinds that state resources as fields of their own (Flink,
// Spark) are in components_jvm.go. Component names are those of Karmada's
// built-in rules, so that a workload's components keep their names when it
// moves from Karmada; MPIJob's are in lower case like the other Kubeflow
// jobs' (Karmada's MPIJob rule keeps Launcher and Worker).
//
// None of them reads a suspend flag: a workload suspended on the hub (as
// a queueing system holds it) runs its pods once resumed in a member, and
// it is what it runs that must fit.

// replicaSpecs is the rule of Kubeflow's jobs (TFJob, PyTorchJob,
// MPIJob): spec.<field> maps a replica type (Chief, PS, Worker, ...) to
// its replicas and template. One component per type, named after the type
// in lower case (Worker: worker), in the order of the sorted types;
// replicas default to defaults[type], else 1, as the operators default
// them.
func replicaSpecs(field string, defaults map[string]int64) componentsFunc {
	return func(obj *unstructured.Unstructured) ([]Component, error) {
		where := "spec." + field
		specs, err := mapAt(obj.Object, "", "spec", field)
		if err != nil {
			return nil, err
		}
		if len(specs) == 0 {
			return nil, fmt.Errorf("%s is missing; a %s lists its replica types (%s) there", where, obj.GetKind(), replicaTypes[field])
		}
		out := make([]Component, 0, len(specs))
		for _, typ := range slices.Sorted(maps.Keys(specs)) {
			at := where + "." + typ
			spec, ok := specs[typ].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s is %v, not a replica spec (replicas and template)", at, specs[typ])
			}
			n, found, err := intAt(spec, at, "replicas")
			if err != nil {
				return nil, err
			}
			if !found {
				n = 1
				if d, ok := defaults[typ]; ok {
					n = d
				}
			}
			req, err := templateRequirements(spec, at)
			if err != nil {
				return nil, err
			}
			out = append(out, Component{Name: strings.ToLower(typ), Replicas: clampReplicas(n), Requirements: req})
		}
		return out, nil
	}
}

// replicaTypes are the replica types each Kubeflow map holds, for the
// message of a map that is missing.
var replicaTypes = map[string]string{
	"tfReplicaSpecs":      "Chief, PS, Worker, Evaluator",
	"pytorchReplicaSpecs": "Master, Worker",
	"mpiReplicaSpecs":     "Launcher, Worker",
}

// volcanoJob is the rule of Volcano's Job: one component per task of
// spec.tasks, in their order, named after the task (an unnamed task is
// named default<index>, as Volcano's admission names it), with the task's
// replicas (0 when unset, as in its CRD).
func volcanoJob(obj *unstructured.Unstructured) ([]Component, error) {
	tasks, err := listAt(obj.Object, "", "spec", "tasks")
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("spec.tasks is missing; a Volcano Job runs its pods as tasks: list them there")
	}
	out := make([]Component, 0, len(tasks))
	for i, t := range tasks {
		at := fmt.Sprintf("spec.tasks[%d]", i)
		task, ok := t.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %v, not a task", at, t)
		}
		name, err := stringAt(task, at, "name")
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = fmt.Sprintf("default%d", i)
		}
		n, _, err := intAt(task, at, "replicas")
		if err != nil {
			return nil, err
		}
		req, err := templateRequirements(task, at)
		if err != nil {
			return nil, err
		}
		out = append(out, Component{Name: name, Replicas: clampReplicas(n), Requirements: req})
	}
	return out, nil
}

// rayHead is the name of a Ray cluster's head component, Karmada's.
const rayHead = "ray-head"

// rayCluster is the rule of a Ray cluster spec at path (a RayCluster's
// spec, a RayJob's spec.rayClusterSpec): its head ("ray-head", 1 pod),
// then one component per worker group of workerGroupSpecs, in their
// order, named after the group, with the pods KubeRay runs for it:
// replicas (0 when unset) brought within [minReplicas, maxReplicas] (0
// and 2^31-1 when unset; maxReplicas when minReplicas exceeds it), times
// numOfHosts (1 when unset). optional: a missing spec is no error but no
// components (a RayJob that submits to an existing cluster creates none).
func rayCluster(optional bool, path ...string) componentsFunc {
	where := strings.Join(path, ".")
	return func(obj *unstructured.Unstructured) ([]Component, error) {
		spec, err := mapAt(obj.Object, "", path...)
		if err != nil {
			return nil, err
		}
		if spec == nil && optional {
			return []Component{}, nil
		}
		head, err := mapAt(spec, where, "headGroupSpec")
		if err != nil {
			return nil, err
		}
		if head == nil {
			return nil, fmt.Errorf("%s.headGroupSpec is missing; a Ray cluster runs one head pod: give its template", where)
		}
		req, err := templateRequirements(head, where+".headGroupSpec")
		if err != nil {
			return nil, err
		}
		out := []Component{{Name: rayHead, Replicas: 1, Requirements: req}}
		groups, err := listAt(spec, where, "workerGroupSpecs")
		if err != nil {
			return nil, err
		}
		for i, g := range groups {
			at := fmt.Sprintf("%s.workerGroupSpecs[%d]", where, i)
			group, ok := g.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s is %v, not a worker group", at, g)
			}
			c, err := rayWorkers(group, at)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
}

// rayWorkers reads one worker group at (its place, for the messages).
func rayWorkers(group map[string]any, at string) (Component, error) {
	name, err := stringAt(group, at, "groupName")
	if err != nil {
		return Component{}, err
	}
	if name == "" {
		return Component{}, fmt.Errorf("%s.groupName is empty; KubeRay tells worker groups apart by name: name it", at)
	}
	var n [4]int64 // replicas, minReplicas, maxReplicas, numOfHosts
	for i, f := range []struct {
		field string
		def   int64
	}{{"replicas", 0}, {"minReplicas", 0}, {"maxReplicas", math.MaxInt32}, {"numOfHosts", 1}} {
		v, found, err := intAt(group, at, f.field)
		if err != nil {
			return Component{}, err
		}
		n[i] = f.def
		if found {
			n[i] = v
		}
	}
	replicas, minReplicas, maxReplicas, hosts := n[0], n[1], n[2], n[3]
	switch {
	case minReplicas > maxReplicas:
		replicas = maxReplicas
	case replicas < minReplicas:
		replicas = minReplicas
	case replicas > maxReplicas:
		replicas = maxReplicas
	}
	req, err := templateRequirements(group, at)
	if err != nil {
		return Component{}, err
	}
	// Both within int32, their product cannot overflow an int64.
	pods := int64(clampReplicas(replicas)) * int64(clampReplicas(hosts))
	return Component{Name: name, Replicas: clampReplicas(pods), Requirements: req}, nil
}

// templateRequirements is what one pod of the PodTemplateSpec at
// m.template needs; nil when there is none. at is m's place, for the
// message.
func templateRequirements(m map[string]any, at string) (*workv1alpha1.ReplicaRequirements, error) {
	spec, err := mapAt(m, at, "template", "spec")
	if err != nil || spec == nil {
		return nil, err
	}
	pod, err := decodePodSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("%s.template.spec: %w", at, err)
	}
	return podRequirements(pod), nil
}

// clampReplicas brings n within int32, keeping its sign: a negative count
// stays negative for checkComponents to refuse, a huge one is 2^31-1, as
// Replicas caps a template's.
func clampReplicas(n int64) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}

// mapAt returns the object at fields of m; nil when it is missing or
// null. at is m's place in the object, for the message.
func mapAt(m map[string]any, at string, fields ...string) (map[string]any, error) {
	v, found, err := unstructured.NestedFieldNoCopy(m, fields...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", joinPath(at, fields...), err)
	}
	if !found || v == nil {
		return nil, nil
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %v, not an object", joinPath(at, fields...), v)
	}
	return out, nil
}

// listAt returns the list at fields of m, as mapAt.
func listAt(m map[string]any, at string, fields ...string) ([]any, error) {
	v, found, err := unstructured.NestedFieldNoCopy(m, fields...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", joinPath(at, fields...), err)
	}
	if !found || v == nil {
		return nil, nil
	}
	out, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %v, not a list", joinPath(at, fields...), v)
	}
	return out, nil
}

// stringAt returns the string at fields of m, "" when it is missing, as
// mapAt.
func stringAt(m map[string]any, at string, fields ...string) (string, error) {
	v, found, err := unstructured.NestedFieldNoCopy(m, fields...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", joinPath(at, fields...), err)
	}
	if !found || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s is %v, not a string", joinPath(at, fields...), v)
	}
	return s, nil
}

// joinPath is the dotted place of fields under at.
func joinPath(at string, fields ...string) string {
	if at == "" {
		return strings.Join(fields, ".")
	}
	return at + "." + strings.Join(fields, ".")
}
