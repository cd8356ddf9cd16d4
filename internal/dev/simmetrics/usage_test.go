package simmetrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
)

func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    float64
		wantErr string
	}{
		{value: "90", want: 90},
		{value: "0", want: 0},
		{value: "12.5", want: 12.5},
		{value: " 75% ", want: 75},
		{value: "1000", want: 1000},
		{value: "abc", wantErr: "is not a number"},
		{value: "", wantErr: "is not a number"},
		{value: "NaN", wantErr: "is not a number"},
		{value: "Inf", wantErr: "is not a number"},
		{value: "-5", wantErr: "is negative"},
		{value: "1001", wantErr: "is above 1000"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := simmetrics.ParsePercent(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParsePercent(%q) = %v, %v; want an error with %q", tc.value, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParsePercent(%q) = %v, %v; want %v", tc.value, got, err, tc.want)
			}
		})
	}
}

// pod is a running, Ready pod of a Deployment's ReplicaSet (unless
// owner is changed) with the given annotations and containers.
func pod(annotations map[string]string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web-7d9f8-abcde", Annotations: annotations,
			Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f8"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8", UID: "rs", Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{Containers: containers, NodeName: "n1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

func ctr(name, cpu, memory string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return c
}

func TestKnobFor(t *testing.T) {
	overrides := simmetrics.Overrides{
		CPU:    map[string]float64{"shop/web": 250},
		Memory: map[string]float64{"shop/other": 5},
	}
	for _, tc := range []struct {
		name         string
		annotations  map[string]string
		overrides    simmetrics.Overrides
		wantCPU      float64
		wantMemory   float64
		wantProblems []string
	}{
		{name: "defaults", wantCPU: simmetrics.DefaultCPUPercent, wantMemory: simmetrics.DefaultMemoryPercent},
		{
			name:        "annotations",
			annotations: map[string]string{simmetrics.CPUUtilizationAnnotation: "90", simmetrics.MemoryUtilizationAnnotation: "40"},
			wantCPU:     90, wantMemory: 40,
		},
		{
			name:        "the override wins over the annotation, per resource",
			annotations: map[string]string{simmetrics.CPUUtilizationAnnotation: "90", simmetrics.MemoryUtilizationAnnotation: "40"},
			overrides:   overrides,
			wantCPU:     250, wantMemory: 40,
		},
		{
			name:         "not a number",
			annotations:  map[string]string{simmetrics.CPUUtilizationAnnotation: "lots"},
			wantCPU:      simmetrics.DefaultCPUPercent,
			wantMemory:   simmetrics.DefaultMemoryPercent,
			wantProblems: []string{`annotation sim.shepherd.io/cpu-utilization: "lots" is not a number`},
		},
		{
			name:         "negative and too large",
			annotations:  map[string]string{simmetrics.CPUUtilizationAnnotation: "-1", simmetrics.MemoryUtilizationAnnotation: "5000"},
			wantCPU:      simmetrics.DefaultCPUPercent,
			wantMemory:   simmetrics.DefaultMemoryPercent,
			wantProblems: []string{`"-1" is negative`, `"5000" is above 1000`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := simmetrics.KnobFor(pod(tc.annotations), tc.overrides)
			if k.CPU != tc.wantCPU || k.Memory != tc.wantMemory {
				t.Errorf("KnobFor = cpu %v memory %v; want %v %v", k.CPU, k.Memory, tc.wantCPU, tc.wantMemory)
			}
			if len(k.Problems) != len(tc.wantProblems) {
				t.Fatalf("problems %q; want %d like %q", k.Problems, len(tc.wantProblems), tc.wantProblems)
			}
			for i, want := range tc.wantProblems {
				if !strings.Contains(k.Problems[i], want) || !strings.Contains(k.Problems[i], "using the default") {
					t.Errorf("problem %q; want it to contain %q and name the default", k.Problems[i], want)
				}
			}
		})
	}
}

func TestWorkloadKey(t *testing.T) {
	p := pod(nil)
	if got := simmetrics.WorkloadKey(p); got != "shop/web" {
		t.Errorf("a Deployment's pod: %q, want shop/web", got)
	}
	p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "StatefulSet", "db"
	if got := simmetrics.WorkloadKey(p); got != "shop/db" {
		t.Errorf("a StatefulSet's pod: %q, want shop/db", got)
	}
	p.OwnerReferences = nil
	if got := simmetrics.WorkloadKey(p); got != "shop/web-7d9f8-abcde" {
		t.Errorf("a bare pod: %q, want its own name", got)
	}
}

func TestParseOverrides(t *testing.T) {
	o, problems := simmetrics.ParseOverrides(map[string]string{
		simmetrics.OverrideCPUKey:    "shop/web: 90\nshop/api: \"12.5\"\nshop/bad: lots\nshop/neg: -3\nnoslash: 5\n",
		simmetrics.OverrideMemoryKey: "shop/web: 1001",
		"cpu":                        "shop/web: 1",
	})
	if o.CPU["shop/web"] != 90 || o.CPU["shop/api"] != 12.5 || len(o.CPU) != 2 {
		t.Errorf("CPU overrides %v; want shop/web 90 and shop/api 12.5 only", o.CPU)
	}
	if len(o.Memory) != 0 {
		t.Errorf("memory overrides %v; want none", o.Memory)
	}
	want := []string{
		`key "cpu" is not used`,
		`key "cpu-utilization": entry "noslash" is not NAMESPACE/WORKLOAD`,
		`key "cpu-utilization": entry "shop/bad": "lots" is not a number`,
		`key "cpu-utilization": entry "shop/neg": "-3" is negative`,
		`key "memory-utilization": entry "shop/web": "1001" is above 1000`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %q; want %d", problems, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(problems[i], want[i]) {
			t.Errorf("problem %d: %q; want it to start with %q", i, problems[i], want[i])
		}
	}
	if _, problems := simmetrics.ParseOverrides(map[string]string{simmetrics.OverrideCPUKey: "[1, 2]"}); len(problems) != 1 ||
		!strings.Contains(problems[0], "is not a YAML map") {
		t.Errorf("a list: problems %q; want one saying it is not a YAML map", problems)
	}
}

func TestContainerUsage(t *testing.T) {
	sidecar := ctr("proxy", "100m", "64Mi")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	limitsOnly := corev1.Container{Name: "limits", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
	}}}
	for _, tc := range []struct {
		name       string
		pod        *corev1.Pod
		knob       simmetrics.Knob
		wantCPU    map[string]string
		wantMemory map[string]string
	}{
		{
			name:       "request times percent",
			pod:        pod(nil, ctr("app", "200m", "100Mi")),
			knob:       simmetrics.Knob{CPU: 90, Memory: 40},
			wantCPU:    map[string]string{"app": "180m"},
			wantMemory: map[string]string{"app": "40Mi"},
		},
		{
			name:       "rounded to millicores and bytes",
			pod:        pod(nil, ctr("app", "333m", "1000")),
			knob:       simmetrics.Knob{CPU: 12.5, Memory: 33.3},
			wantCPU:    map[string]string{"app": "42m"},
			wantMemory: map[string]string{"app": "333"},
		},
		{
			name:       "above the request",
			pod:        pod(nil, ctr("app", "1", "1Gi")),
			knob:       simmetrics.Knob{CPU: 250, Memory: 1000},
			wantCPU:    map[string]string{"app": "2500m"},
			wantMemory: map[string]string{"app": "10Gi"},
		},
		{
			name:       "no requests, no usage; limits stand in for requests",
			pod:        pod(nil, ctr("bare", "", ""), limitsOnly),
			knob:       simmetrics.Knob{CPU: 50, Memory: 50},
			wantCPU:    map[string]string{"bare": "0", "limits": "500m"},
			wantMemory: map[string]string{"bare": "0", "limits": "512Mi"},
		},
		{
			name: "sidecars count, other init containers do not",
			pod: func() *corev1.Pod {
				p := pod(nil, ctr("app", "200m", "100Mi"))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", "1", "1Gi"), sidecar}
				return p
			}(),
			knob:       simmetrics.Knob{CPU: 100, Memory: 100},
			wantCPU:    map[string]string{"app": "200m", "proxy": "100m"},
			wantMemory: map[string]string{"app": "100Mi", "proxy": "64Mi"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := simmetrics.ContainerUsage(tc.pod, tc.knob)
			if len(got) != len(tc.wantCPU) {
				t.Fatalf("%d containers, want %d: %v", len(got), len(tc.wantCPU), got)
			}
			for _, c := range got {
				cpu, mem := c.Usage[corev1.ResourceCPU], c.Usage[corev1.ResourceMemory]
				if want := resource.MustParse(tc.wantCPU[c.Name]); cpu.Cmp(want) != 0 {
					t.Errorf("%s: cpu %s, want %s", c.Name, cpu.String(), want.String())
				}
				if want := resource.MustParse(tc.wantMemory[c.Name]); mem.Cmp(want) != 0 {
					t.Errorf("%s: memory %s, want %s", c.Name, mem.String(), want.String())
				}
			}
		})
	}
}

func TestReporting(t *testing.T) {
	running := pod(nil)
	pending := pod(nil)
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending}
	unready := pod(nil)
	unready.Status.Conditions[0].Status = corev1.ConditionFalse
	noCondition := pod(nil)
	noCondition.Status.Conditions = nil
	succeeded := pod(nil)
	succeeded.Status.Phase = corev1.PodSucceeded
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"running and ready", running, true},
		{"pending", pending, false},
		{"running, not ready", unready, false},
		{"running, no Ready condition yet", noCondition, false},
		{"succeeded", succeeded, false},
	} {
		if got := simmetrics.Reporting(tc.pod); got != tc.want {
			t.Errorf("%s: Reporting = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNodeMetricsSumPods(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}
	a, b, c := pod(nil, ctr("app", "200m", "100Mi")), pod(nil, ctr("app", "300m", "50Mi")), pod(nil, ctr("app", "1", "1Gi"))
	a.Name, b.Name, c.Name = "a", "b", "c"
	k := simmetrics.Knob{CPU: 50, Memory: 100}
	pms := []struct {
		pod  *corev1.Pod
		node string
	}{{a, "n1"}, {b, "n1"}, {c, "elsewhere"}}
	podNode := map[string]string{}
	metrics := make([]metricsv1beta1.PodMetrics, 0, len(pms))
	for _, p := range pms {
		podNode[p.pod.Namespace+"/"+p.pod.Name] = p.node
		metrics = append(metrics, simmetrics.PodMetrics(p.pod, k, now))
	}
	got := simmetrics.NodeMetrics(nodes, metrics, podNode, now)
	if len(got) != 2 || got[0].Name != "n1" || got[1].Name != "n2" {
		t.Fatalf("nodes %v; want n1 and n2, sorted", got)
	}
	for _, tc := range []struct {
		i           int
		cpu, memory string
	}{{0, "250m", "150Mi"}, {1, "0", "0"}} {
		n := got[tc.i]
		cpu, mem := n.Usage[corev1.ResourceCPU], n.Usage[corev1.ResourceMemory]
		if cpu.Cmp(resource.MustParse(tc.cpu)) != 0 || mem.Cmp(resource.MustParse(tc.memory)) != 0 {
			t.Errorf("%s: cpu %s memory %s; want %s %s", n.Name, cpu.String(), mem.String(), tc.cpu, tc.memory)
		}
		if !n.Timestamp.Time.Equal(now) || n.Window.Duration != simmetrics.Window {
			t.Errorf("%s: timestamp %v window %v; want %v %v", n.Name, n.Timestamp, n.Window, now, simmetrics.Window)
		}
	}
}

func TestParseMetricValue(t *testing.T) {
	for _, tc := range []struct {
		value, want, wantErr string
	}{
		{value: "20", want: "20"},
		{value: "1500m", want: "1500m"},
		{value: " 2k ", want: "2k"},
		{value: "0", want: "0"},
		{value: "1T", want: "1T"},
		{value: "lots", wantErr: "is not a quantity"},
		{value: "", wantErr: "is not a quantity"},
		{value: "-1", wantErr: "is negative"},
		{value: "2T", wantErr: "is above 1T"},
	} {
		q, err := simmetrics.ParseMetricValue(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseMetricValue(%q) = %v, %v; want an error with %q", tc.value, q.String(), err, tc.wantErr)
			}
			continue
		}
		if err != nil || q.Cmp(resource.MustParse(tc.want)) != 0 {
			t.Errorf("ParseMetricValue(%q) = %v, %v; want %s", tc.value, q.String(), err, tc.want)
		}
	}
}

// TestCustomMetricsKnob: a pod's Pods metrics come from its annotations,
// its workload's override entries over them; a value that is not one is
// left out and told; the override ConfigMap's metric keys refuse what
// they cannot use, entry by entry.
func TestCustomMetricsKnob(t *testing.T) {
	o, problems := simmetrics.ParseOverrides(map[string]string{
		simmetrics.OverridePodsMetricsKey:   "shop/web: {rps: 20, latency: \"250m\", bad: -1, \"a/b\": 1, list: [1]}\nnoslash: {rps: 1}\n",
		simmetrics.OverrideObjectMetricsKey: "shop/services/web: {requests: 2k}\nshop/services: {requests: 1}\n",
	})
	if q := o.PodsMetrics["shop/web"]["rps"]; q.Cmp(resource.MustParse("20")) != 0 || len(o.PodsMetrics["shop/web"]) != 2 {
		t.Errorf("pods metrics %v; want shop/web rps 20 and latency 250m", o.PodsMetrics)
	}
	if q := o.ObjectMetrics["shop/services/web"]["requests"]; q.Cmp(resource.MustParse("2k")) != 0 || len(o.ObjectMetrics) != 1 {
		t.Errorf("object metrics %v; want shop/services/web requests 2k", o.ObjectMetrics)
	}
	want := []string{
		`key "object-metrics": entry "shop/services" is not NAMESPACE/RESOURCE/NAME`,
		`key "pods-metrics": entry "noslash" is not NAMESPACE/WORKLOAD`,
		`key "pods-metrics": entry "shop/web": metric bad: "-1" is negative`,
		`key "pods-metrics": entry "shop/web": metric list: [1] is not a quantity`,
		`key "pods-metrics": entry "shop/web": metric name "a/b" is not one`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %q; want %d", problems, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(problems[i], want[i]) {
			t.Errorf("problem %d: %q; want it to start with %q", i, problems[i], want[i])
		}
	}
	if _, problems := simmetrics.ParseOverrides(map[string]string{simmetrics.OverridePodsMetricsKey: "shop/web: 5"}); len(problems) != 1 ||
		!strings.Contains(problems[0], "is not a YAML map of NAMESPACE/WORKLOAD to a map of metric name to value") {
		t.Errorf("a value where a map goes: problems %q", problems)
	}

	k := simmetrics.KnobFor(pod(map[string]string{simmetrics.MetricAnnotationPrefix + "rps": "3", simmetrics.MetricAnnotationPrefix + "queue": "7",
		simmetrics.MetricAnnotationPrefix + "bad": "-2"}), o)
	got := map[string]string{}
	for name, q := range k.Metrics {
		got[name] = q.String()
	}
	if fmt.Sprint(got) != "map[latency:250m queue:7 rps:20]" {
		t.Errorf("metrics %v; want the workload's override over its annotation, and the annotation's other", got)
	}
	if len(k.Problems) != 1 || !strings.HasPrefix(k.Problems[0], `annotation metric.sim.shepherd.io/bad: "-2" is negative`) || !strings.HasSuffix(k.Problems[0], "no value of metric bad") {
		t.Errorf("problems %q", k.Problems)
	}
}
