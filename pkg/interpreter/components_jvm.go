package interpreter

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// The components rules of Flink's and Spark's operators, whose workloads
// state each pod's CPU and memory as fields of their own (in the JVM's
// memory syntax) beside an optional pod template. The rule builds the pod
// the operator would run, the template's containers with the main one
// sized by those fields, and reads what it needs with podRequirements,
// as Replicas reads any pod.

// flinkDeployment is the rule of the Flink operator's FlinkDeployment: its
// JobManager ("jobmanager", spec.jobManager.replicas, 1 when unset), then
// its TaskManagers ("taskmanager"): spec.taskManager.replicas, or, when
// unset, as many as the job's parallelism needs task slots
// (ceil(parallelism / taskmanager.numberOfTaskSlots)), or none for a
// session cluster without a job, which starts TaskManagers only for the
// jobs it is given.
func flinkDeployment(obj *unstructured.Unstructured) ([]Component, error) {
	spec, err := mapAt(obj.Object, "", "spec")
	if err != nil {
		return nil, err
	}
	jm, found, err := intAt(spec, "spec", "jobManager", "replicas")
	if err != nil {
		return nil, err
	}
	if !found {
		jm = 1
	}
	slots, err := flinkConfInt(spec, "taskmanager.numberOfTaskSlots", 1)
	if err != nil {
		return nil, err
	}
	tm, found, err := intAt(spec, "spec", "taskManager", "replicas")
	if err != nil {
		return nil, err
	}
	if job, _ := mapAt(spec, "spec", "job"); !found && job != nil {
		parallelism, found, err := intAt(job, "spec.job", "parallelism")
		if err != nil {
			return nil, err
		}
		if !found {
			if parallelism, err = flinkConfInt(spec, "parallelism.default", 1); err != nil {
				return nil, err
			}
		}
		if slots < 1 {
			return nil, fmt.Errorf("taskmanager.numberOfTaskSlots is %d in spec.flinkConfiguration; a TaskManager has 1 slot or more", slots)
		}
		tm = (max(parallelism, 0) + slots - 1) / slots
	}
	out := make([]Component, 0, 2)
	for _, c := range []struct {
		name, role string
		replicas   int64
		cpu        float64 // Flink's default CPU, when nothing sets it
	}{{"jobmanager", "jobManager", jm, 1}, {"taskmanager", "taskManager", tm, float64(slots)}} {
		req, err := flinkRequirements(spec, c.role, c.cpu)
		if err != nil {
			return nil, err
		}
		out = append(out, Component{Name: c.name, Replicas: clampReplicas(c.replicas), Requirements: req})
	}
	return out, nil
}

// flinkMainContainer is the container the Flink operator sizes.
const flinkMainContainer = "flink-main-container"

// flinkRequirements is what one pod of role (jobManager, taskManager)
// needs: its pod template over spec.podTemplate (containers and init
// containers by name, the role's winning; other fields the role's when it
// has them), with the main container's CPU and memory requests those of
// spec.<role>.resources (its requests, else its limits) or else of
// spec.<role>.resource, which Flink sets over the template's. A role that
// sets no CPU anywhere gets Flink's default (1 for a JobManager, a CPU per
// task slot for a TaskManager).
func flinkRequirements(spec map[string]any, role string, defaultCPU float64) (*workv1alpha1.ReplicaRequirements, error) {
	at := "spec." + role
	common, err := mapAt(spec, "spec", "podTemplate", "spec")
	if err != nil {
		return nil, err
	}
	own, err := mapAt(spec, "spec", role, "podTemplate", "spec")
	if err != nil {
		return nil, err
	}
	pod, err := decodePodSpec(mergePodSpecs(common, own))
	if err != nil {
		return nil, fmt.Errorf("%s.podTemplate.spec over spec.podTemplate.spec: %w", at, err)
	}
	main := mainContainer(pod, flinkMainContainer, false)
	requests := corev1.ResourceList{}
	if rs, err := mapAt(spec, "spec", role, "resources"); err != nil {
		return nil, err
	} else if rs != nil {
		r := corev1.ResourceRequirements{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rs, &r); err != nil {
			return nil, fmt.Errorf("%s.resources: %w", at, err)
		}
		requestLimits(&r)
		requests = r.Requests
	} else if r, err := mapAt(spec, "spec", role, "resource"); err != nil {
		return nil, err
	} else if r != nil {
		if requests, err = flinkResource(r, at+".resource"); err != nil {
			return nil, err
		}
	}
	if main.Resources.Requests == nil {
		main.Resources.Requests = corev1.ResourceList{}
	}
	for name, q := range requests {
		main.Resources.Requests[name] = q
	}
	if _, cpu := main.Resources.Requests[corev1.ResourceCPU]; !cpu {
		if _, limit := main.Resources.Limits[corev1.ResourceCPU]; !limit {
			main.Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Round(defaultCPU*1000)), resource.DecimalSI)
		}
	}
	return podRequirements(pod), nil
}

// flinkResource reads a Flink resource field: cpu (a number of CPUs),
// memory (Flink's memory syntax, else a Kubernetes quantity) and
// ephemeralStorage (a Kubernetes quantity).
func flinkResource(r map[string]any, at string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	switch cpu := r["cpu"].(type) {
	case nil:
	case int64:
		out[corev1.ResourceCPU] = *resource.NewQuantity(cpu, resource.DecimalSI)
	case float64:
		out[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(math.Round(cpu*1000)), resource.DecimalSI)
	default:
		return nil, fmt.Errorf("%s.cpu is %v, not a number of CPUs", at, cpu)
	}
	if m, err := stringAt(r, at, "memory"); err != nil {
		return nil, err
	} else if m != "" {
		q, err := flinkMemory(m)
		if err != nil {
			return nil, fmt.Errorf("%s.memory: %w", at, err)
		}
		out[corev1.ResourceMemory] = q
	}
	if s, err := stringAt(r, at, "ephemeralStorage"); err != nil {
		return nil, err
	} else if s != "" {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("%s.ephemeralStorage is %q: %w", at, s, err)
		}
		out[corev1.ResourceEphemeralStorage] = q
	}
	return out, nil
}

// flinkMemorySyntax is Flink's MemorySize: a whole number of bytes with
// an optional binary unit, any case, spaces allowed before it.
var flinkMemorySyntax = regexp.MustCompile(`^(\d+)\s*([a-zA-Z]*)$`)

// flinkMemoryUnits are the units of Flink's MemorySize, in bytes.
var flinkMemoryUnits = map[string]int64{
	"": 1, "b": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40,
}

// flinkMemory parses a memory size as the Flink operator does: Flink's
// syntax first ("2048m", "1g": binary units, so 1g is 1Gi), else a
// Kubernetes quantity, upper-cased, with a trailing B dropped ("2Gi",
// "1.5G").
func flinkMemory(s string) (resource.Quantity, error) {
	trimmed := strings.TrimSpace(s)
	if m := flinkMemorySyntax.FindStringSubmatch(trimmed); m != nil {
		if unit, ok := flinkMemoryUnits[strings.ToLower(m[2])]; ok {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err == nil && n <= math.MaxInt64/unit {
				return *resource.NewQuantity(n*unit, resource.BinarySI), nil
			}
		}
	}
	k := strings.ToUpper(strings.Join(strings.Fields(trimmed), ""))
	k = strings.TrimSuffix(k, "B")
	if strings.HasSuffix(k, "I") {
		k = strings.TrimSuffix(k, "I") + "i"
	}
	q, err := resource.ParseQuantity(k)
	if err != nil || q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("%q is neither Flink's memory syntax (e.g. 2048m, 2g) nor a Kubernetes quantity (e.g. 2Gi)", s)
	}
	return q, nil
}

// flinkConfInt reads an integer option of spec.flinkConfiguration, a flat
// key ("taskmanager.numberOfTaskSlots") or, in the operator's YAML form,
// nested; def when unset. Flink's options are strings; numbers are taken
// too.
func flinkConfInt(spec map[string]any, key string, def int64) (int64, error) {
	conf, err := mapAt(spec, "spec", "flinkConfiguration")
	if err != nil || conf == nil {
		return def, err
	}
	v, ok := conf[key]
	if !ok {
		v, _, _ = unstructured.NestedFieldNoCopy(conf, strings.Split(key, ".")...)
	}
	switch v := v.(type) {
	case nil:
		return def, nil
	case int64:
		return v, nil
	case float64:
		if v == math.Trunc(v) {
			return int64(v), nil
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("spec.flinkConfiguration %s is %v, not an integer", key, v)
}

// mergePodSpecs lays own over common, as the Flink operator merges a
// role's pod template over the deployment's: containers and init
// containers by name (own's winning whole), other fields own's when set.
// Neither is changed; either may be nil.
func mergePodSpecs(common, own map[string]any) map[string]any {
	out := make(map[string]any, len(common)+len(own))
	for k, v := range common {
		out[k] = v
	}
	for k, v := range own {
		if k == "containers" || k == "initContainers" {
			out[k] = mergeByName(common[k], v)
			continue
		}
		out[k] = v
	}
	return out
}

// mergeByName is base's elements with those of over of the same name
// replaced, then over's others, in order.
func mergeByName(base, over any) any {
	b, _ := base.([]any)
	o, ok := over.([]any)
	if !ok {
		return over
	}
	name := func(v any) string {
		m, _ := v.(map[string]any)
		s, _ := m["name"].(string)
		return s
	}
	byName := map[string]any{}
	for _, v := range o {
		if n := name(v); n != "" {
			byName[n] = v
		}
	}
	out := make([]any, 0, len(b)+len(o))
	used := map[string]bool{}
	for _, v := range b {
		if r, ok := byName[name(v)]; ok && name(v) != "" {
			out = append(out, r)
			used[name(v)] = true
			continue
		}
		out = append(out, v)
	}
	for _, v := range o {
		if n := name(v); n == "" || !used[n] {
			out = append(out, v)
		}
	}
	return out
}

// mainContainer returns the container of pod its operator sizes: the one
// named name or, when first, the first container (Spark's rule for a pod
// template); one named name is added when there is none.
func mainContainer(pod *corev1.Pod, name string, first bool) *corev1.Container {
	cs := pod.Spec.Containers
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	if first && len(cs) > 0 {
		return &cs[0]
	}
	pod.Spec.Containers = append(cs, corev1.Container{Name: name})
	return &pod.Spec.Containers[len(pod.Spec.Containers)-1]
}

// sparkApplication is the rule of the Spark operator's SparkApplication:
// its driver ("driver", 1 pod), then its executors ("executor"):
// spec.executor.instances (1 when unset) or, with dynamic allocation, the
// executors Spark starts with: the largest of instances, initialExecutors
// and minExecutors (0 when unset). What a pod needs is read from the
// SparkApplication's fields (sparkConf is not read).
func sparkApplication(obj *unstructured.Unstructured) ([]Component, error) {
	spec, err := mapAt(obj.Object, "", "spec")
	if err != nil {
		return nil, err
	}
	factor, err := sparkOverheadFactor(spec)
	if err != nil {
		return nil, err
	}
	executors, found, err := intAt(spec, "spec", "executor", "instances")
	if err != nil {
		return nil, err
	}
	if enabled, _, _ := unstructured.NestedBool(spec, "dynamicAllocation", "enabled"); enabled {
		executors = max(executors, 0)
		for _, f := range []string{"initialExecutors", "minExecutors"} {
			n, _, err := intAt(spec, "spec", "dynamicAllocation", f)
			if err != nil {
				return nil, err
			}
			executors = max(executors, n)
		}
	} else if !found {
		executors = 1
	}
	out := make([]Component, 0, 2)
	for _, c := range []struct {
		name, main string
		replicas   int64
	}{{"driver", "spark-kubernetes-driver", 1}, {"executor", "spark-kubernetes-executor", executors}} {
		req, err := sparkRequirements(spec, c.name, c.main, factor)
		if err != nil {
			return nil, err
		}
		out = append(out, Component{Name: c.name, Replicas: clampReplicas(c.replicas), Requirements: req})
	}
	return out, nil
}

// sparkMinOverheadMiB is the least memory overhead Spark adds to a pod.
const sparkMinOverheadMiB = 384

// sparkMaxMiB bounds a Spark memory size (1 EiB), far above any pod's, so
// that a pod's memory and overhead add up without overflowing.
const sparkMaxMiB = 1 << 40

// sparkOverheadFactor is the share of a pod's memory Spark adds for what
// is off the JVM's heap: spec.memoryOverheadFactor, else 0.1 for a JVM
// application (Java, Scala, the default) and 0.4 for Python and R.
func sparkOverheadFactor(spec map[string]any) (float64, error) {
	if s, err := stringAt(spec, "spec", "memoryOverheadFactor"); err != nil {
		return 0, err
	} else if s != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("spec.memoryOverheadFactor is %q, not a factor such as 0.1", s)
		}
		return f, nil
	}
	if t, _ := spec["type"].(string); t == "Python" || t == "R" {
		return 0.4, nil
	}
	return 0.1, nil
}

// sparkRequirements is what one pod of role (driver, executor) needs: its
// template's pod with the main container (the template's first, else one
// named main) requesting spec.<role>.coreRequest, else cores (1 when
// unset), CPUs, the memory plus its overhead (memoryOverhead, else the
// factor of the memory, at least 384Mi; memory is 1g when unset) and
// spec.<role>.gpu; then the sidecars and init containers, and the role's
// priorityClassName.
func sparkRequirements(spec map[string]any, role, main string, factor float64) (*workv1alpha1.ReplicaRequirements, error) {
	at := "spec." + role
	r, err := mapAt(spec, "spec", role)
	if err != nil {
		return nil, err
	}
	tmpl, err := mapAt(r, at, "template", "spec")
	if err != nil {
		return nil, err
	}
	pod, err := decodePodSpec(tmpl)
	if err != nil {
		return nil, fmt.Errorf("%s.template.spec: %w", at, err)
	}
	extra, err := decodePodSpec(map[string]any{"containers": r["sidecars"], "initContainers": r["initContainers"]})
	if err != nil {
		return nil, fmt.Errorf("%s sidecars or initContainers: %w", at, err)
	}
	requests, err := sparkRequests(r, at, factor)
	if err != nil {
		return nil, err
	}
	c := mainContainer(pod, main, true)
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	for name, q := range requests {
		c.Resources.Requests[name] = q
	}
	pod.Spec.Containers = append(pod.Spec.Containers, extra.Spec.Containers...)
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, extra.Spec.InitContainers...)
	if pc, err := stringAt(r, at, "priorityClassName"); err != nil {
		return nil, err
	} else if pc != "" {
		pod.Spec.PriorityClassName = pc
	}
	return podRequirements(pod), nil
}

// sparkRequests are the main container's requests of a Spark role r.
func sparkRequests(r map[string]any, at string, factor float64) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	if s, err := stringAt(r, at, "coreRequest"); err != nil {
		return nil, err
	} else if s != "" {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("%s.coreRequest is %q: %w", at, s, err)
		}
		out[corev1.ResourceCPU] = q
	} else {
		q, err := sparkCores(r["cores"], at)
		if err != nil {
			return nil, err
		}
		out[corev1.ResourceCPU] = q
	}
	memory, err := stringAt(r, at, "memory")
	if err != nil {
		return nil, err
	}
	memMiB, err := sparkMiB(memory, "1g")
	if err != nil {
		return nil, fmt.Errorf("%s.memory: %w", at, err)
	}
	overhead, err := stringAt(r, at, "memoryOverhead")
	if err != nil {
		return nil, err
	}
	byFactor := factor * float64(memMiB)
	if byFactor > sparkMaxMiB {
		return nil, fmt.Errorf("spec.memoryOverheadFactor %v of %s.memory %q is more memory than any pod has", factor, at, memory)
	}
	overheadMiB := max(int64(byFactor), sparkMinOverheadMiB)
	if overhead != "" {
		if overheadMiB, err = sparkMiB(overhead, ""); err != nil {
			return nil, fmt.Errorf("%s.memoryOverhead: %w", at, err)
		}
	}
	out[corev1.ResourceMemory] = *resource.NewQuantity((memMiB+overheadMiB)<<20, resource.BinarySI)
	if gpu, err := mapAt(r, at, "gpu"); err != nil {
		return nil, err
	} else if gpu != nil {
		name, err := stringAt(gpu, at+".gpu", "name")
		if err != nil {
			return nil, err
		}
		n, _, err := intAt(gpu, at+".gpu", "quantity")
		if err != nil {
			return nil, err
		}
		if name != "" && n > 0 {
			out[corev1.ResourceName(name)] = *resource.NewQuantity(n, resource.DecimalSI)
		}
	}
	return out, nil
}

// sparkCores reads a role's cores: a whole number of CPUs (the operator
// takes a string too); 1 when unset.
func sparkCores(v any, at string) (resource.Quantity, error) {
	switch v := v.(type) {
	case nil:
		return *resource.NewQuantity(1, resource.DecimalSI), nil
	case int64:
		return *resource.NewQuantity(v, resource.DecimalSI), nil
	case float64:
		if v == math.Trunc(v) {
			return *resource.NewQuantity(int64(v), resource.DecimalSI), nil
		}
	case string:
		if q, err := resource.ParseQuantity(v); err == nil {
			return q, nil
		}
	}
	return resource.Quantity{}, fmt.Errorf("%s.cores is %v, not a number of CPUs", at, v)
}

// sparkMemorySyntax is the JVM's memory syntax Spark reads: a whole number
// with an optional binary unit (b, k, m, g, t, p, with or without a
// trailing b), any case.
var sparkMemorySyntax = regexp.MustCompile(`^(\d+)([kmgtp]?b?)$`)

// sparkMiB parses a Spark memory size into whole MiB, as Spark does (a
// number without a unit is MiB; less than a MiB rounds down); def when s
// is empty.
func sparkMiB(s, def string) (int64, error) {
	if s == "" {
		s = def
	}
	m := sparkMemorySyntax.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return 0, fmt.Errorf("%q is not a JVM memory size such as 512m or 2g", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	shift := map[string]int{"": 20, "b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30, "t": 40, "tb": 40, "p": 50, "pb": 50}[m[2]]
	if n > sparkMaxMiB<<20>>shift {
		return 0, fmt.Errorf("%q is more memory than any pod has", s)
	}
	return (n << shift) >> 20, nil
}
