package federatedhpa

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

var t0 = time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)

func cpuUtil(pct int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &pct}}}
}

func memAvg(q string) autoscalingv2.MetricSpec {
	v := resource.MustParse(q)
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v}}}
}

func objectValue(v string) autoscalingv2.MetricSpec {
	q := resource.MustParse(v)
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &q}}}
}

func objectAvg(v string) autoscalingv2.MetricSpec {
	m := objectValue("1")
	q := resource.MustParse(v)
	m.Object.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}
	return m
}

func podsAvg(name, v string) autoscalingv2.MetricSpec {
	q := resource.MustParse(v)
	return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: name}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}}
}

// badSelector gives a Pods or Object metric a selector that does not parse.
func badSelector(m autoscalingv2.MetricSpec) autoscalingv2.MetricSpec {
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "verb", Operator: "Near"}}}
	if m.Pods != nil {
		m.Pods.Metric.Selector = sel
	} else {
		m.Object.Metric.Selector = sel
	}
	return m
}

func external(name string) autoscalingv2.MetricSpec {
	q := resource.MustParse("30")
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: name}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}}
}

// valued are n ready pods whose one metric is a Pods metric at milli.
func valued(prefix string, n int, milli int64) []pod {
	out := make([]pod, n)
	for i := range out {
		out[i] = p(prefix+string(rune('a'+i)), 0, milli)
	}
	return out
}

// withObject is c with value milli read for its one (Object) metric.
func withObject(c cluster, milli int64) cluster {
	c.object, c.hasObject = []int64{milli}, []bool{true}
	return c
}

// leftOutOf is c left out of its metric i (of n) for why.
func leftOutOf(c cluster, n, i int, why string) cluster {
	c.leftOut = make([]string, n)
	c.leftOut[i] = why
	return c
}

// p is a running, ready pod with, per metric, a request and a usage (-1:
// no sample); requests and usages are milli-units.
func p(name string, reqUse ...int64) pod {
	out := pod{name: name}
	for i := 0; i+1 < len(reqUse); i += 2 {
		out.request = append(out.request, reqUse[i])
		out.usage = append(out.usage, max(reqUse[i+1], 0))
		out.hasUsage = append(out.hasUsage, reqUse[i+1] >= 0)
		out.requestErr = append(out.requestErr, "")
	}
	return out
}

func pending(q pod) pod    { q.pending, q.notReady = true, true; return q }
func unreadyCPU(q pod) pod { q.unreadyCPU = true; return q }

// pods are n ready pods requesting 100m CPU and using use.
func pods(prefix string, n int, use int64) []pod {
	out := make([]pod, n)
	for i := range out {
		out[i] = p(prefix+string(rune('a'+i)), 100, use)
	}
	return out
}

func spec(minR, maxR int32, ms ...autoscalingv2.MetricSpec) autoscalingv1alpha1.FederatedHPASpec {
	return autoscalingv1alpha1.FederatedHPASpec{MinReplicas: &minR, MaxReplicas: maxR, Metrics: ms}
}

func TestDecide(t *testing.T) {
	slowUp := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}}}
	halfDown := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 50, PeriodSeconds: 60}}}}
	for _, tc := range []struct {
		name      string
		spec      autoscalingv1alpha1.FederatedHPASpec
		current   int32
		clusters  []cluster
		history   history
		want      int32
		active    corev1.ConditionStatus
		limited   string // ScalingLimited reason, when checked
		able      string // AbleToScale reason, when checked
		mentioned string // in the ScalingActive message
		unplaced  string // the scheduler's reason it could not place current
		limitedBy string // in the ScalingLimited message
	}{
		{name: "CPU at twice the target doubles the pods", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 2, 100)}, {name: "b", pods: pods("b", 2, 100)}}, want: 8, active: corev1.ConditionTrue, limited: "DesiredWithinRange"},
		{name: "within the 10% tolerance: no change", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 54)}}, want: 4, active: corev1.ConditionTrue},
		{name: "just outside the tolerance", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 56)}}, want: 5},
		{name: "scale-down: a pod without metrics counts at 100% of its request", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: append(pods("a", 3, 10), p("m", 100, -1))}}, want: 3},
		{name: "scale-down without that pod would go lower", spec: spec(1, 10, cpuUtil(50)), current: 3,
			clusters: []cluster{{name: "a", pods: pods("a", 3, 10)}}, want: 1},
		{name: "scale-up: a pod without metrics counts as idle", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: append(pods("a", 3, 100), p("m", 100, -1))}}, want: 6},
		{name: "scale-up: a pending pod is left out, then counts as idle", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: append(pods("a", 3, 100), pending(p("m", 100, 0)))}}, want: 6},
		{name: "scale-up: a pod not ready by the CPU rule counts as idle", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: append(pods("a", 3, 100), unreadyCPU(p("m", 100, 500)))}}, want: 6},
		{name: "scale-down: unready pods are left out", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: append(pods("a", 3, 10), pending(p("m", 100, 0)))}}, want: 1},
		{name: "the highest count over the metrics", spec: spec(1, 20, cpuUtil(50), memAvg("100")), current: 4,
			clusters: []cluster{{name: "a", pods: []pod{p("a", 100, 75, 0, 200000), p("b", 100, 75, 0, 200000), p("c", 100, 75, 0, 200000), p("d", 100, 75, 0, 200000)}}},
			want:     8, mentioned: "memory resource"},
		{name: "maxReplicas bounds the count", spec: spec(1, 6, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 500)}}, want: 6, limited: "TooManyReplicas"},
		{name: "the default scale-up rate: 4 pods or 100% per 15 s", spec: spec(1, 100, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 500)}}, want: 8, limited: "ScaleUpLimit"},
		{name: "minReplicas bounds the count", spec: spec(3, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 1)}}, want: 3, limited: "TooFewReplicas"},
		{name: "scale-down stabilization: a higher count in the last 300 s holds", spec: spec(1, 10, cpuUtil(50)), current: 8,
			clusters: []cluster{{name: "a", pods: pods("a", 8, 25)}}, history: history{recommendations: []recommendation{{t0.Add(-100 * time.Second), 8}}},
			want: 8, able: "ScaleDownStabilized"},
		{name: "scale-down after the window", spec: spec(1, 10, cpuUtil(50)), current: 8,
			clusters: []cluster{{name: "a", pods: pods("a", 8, 25)}}, history: history{recommendations: []recommendation{{t0.Add(-301 * time.Second), 8}}},
			want: 4, able: "ReadyForNewScale"},
		{name: "a scale-up policy of one pod per minute after a scale-up 30 s ago", spec: func() autoscalingv1alpha1.FederatedHPASpec {
			s := spec(1, 10, cpuUtil(50))
			s.Behavior = slowUp
			return s
		}(), current: 4, clusters: []cluster{{name: "a", pods: pods("a", 4, 100)}}, history: history{ups: []scaleEvent{{t0.Add(-30 * time.Second), 1}}},
			want: 4, limited: "ScaleUpLimit"},
		{name: "a scale-down policy of 50% per minute", spec: func() autoscalingv1alpha1.FederatedHPASpec {
			s := spec(1, 10, cpuUtil(50))
			s.Behavior = halfDown
			return s
		}(), current: 10, clusters: []cluster{{name: "a", pods: pods("a", 10, 5)}}, want: 5, limited: "ScaleDownLimit"},
		{name: "a member without metrics is left out and named; its pods count at the average", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 2, 100)}, {name: "b", excluded: "metrics stale", pods: pods("b", 2, 0)}},
			want:     8, mentioned: "b (metrics stale)"},
		{name: "no scale-down while a member is left out", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 2, 5)}, {name: "b", excluded: "unreachable", pods: pods("b", 2, 0)}},
			want:     4, mentioned: "b (unreachable)"},
		{name: "every member left out: no count, nothing changes", spec: spec(1, 10, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", excluded: "no metrics", pods: pods("a", 4, 0)}}, want: 4, active: corev1.ConditionFalse, mentioned: "a (no metrics)"},
		{name: "a target at zero replicas is not scaled", spec: spec(1, 10, cpuUtil(50)), current: 0, want: 0, active: corev1.ConditionFalse},
		{name: "above maxReplicas: brought down", spec: spec(1, 3, cpuUtil(50)), current: 5,
			clusters: []cluster{{name: "a", pods: pods("a", 5, 50)}}, want: 3, limited: "TooManyReplicas"},
		{name: "pods metric: the average per pod over every member's pods", spec: spec(1, 20, podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: valued("a", 2, 20000)}, {name: "b", pods: valued("b", 2, 10000)}}, want: 6, active: corev1.ConditionTrue, mentioned: "pods metric rps"},
		{name: "pods metric: a pod without a value counts at the target on a scale-down", spec: spec(1, 20, podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: append(valued("a", 3, 2000), p("m", 0, -1))}}, want: 2},
		{name: "pods metric: a member left out is named, its pods count at the others' average", spec: spec(1, 20, podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: valued("a", 2, 15000)}, leftOutOf(cluster{name: "b", pods: valued("b", 2, 0)}, 1, 0, "pods metric rps not readable: not found")},
			want:     6, active: corev1.ConditionTrue, mentioned: "b (pods metric rps not readable: not found)"},
		{name: "pods metric: no scale-down while a member is left out", spec: spec(1, 20, podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: valued("a", 2, 1000)}, leftOutOf(cluster{name: "b", pods: valued("b", 2, 0)}, 1, 0, "no values of pods metric rps for its running pods")},
			want:     4, mentioned: "b (no values of pods metric rps"},
		{name: "pods metric whose selector does not parse: not active, the metric named", spec: spec(1, 20, badSelector(podsAvg("rps", "10"))), current: 4,
			clusters: []cluster{{name: "a", pods: valued("a", 2, 90000)}}, want: 4, active: corev1.ConditionFalse, mentioned: "pods metric rps: metric.selector"},
		{name: "pods metric without a name: not active", spec: spec(1, 20, podsAvg("", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: valued("a", 2, 90000)}}, want: 4, active: corev1.ConditionFalse, mentioned: "a Pods metric without a metric name"},
		{name: "object metric of an object without a kind: not active", spec: func() autoscalingv1alpha1.FederatedHPASpec {
			m := objectValue("200")
			m.Object.DescribedObject.Kind = ""
			return spec(1, 20, m)
		}(), current: 4, clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 900000)}, want: 4, active: corev1.ConditionFalse,
			mentioned: "describedObject needs an apiVersion, a kind and a name"},
		{name: "cpu and a pods metric: the highest count wins", spec: spec(1, 20, cpuUtil(50), podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: []pod{p("a", 100, 50, 0, 20000), p("b", 100, 50, 0, 20000)}}, {name: "b", pods: []pod{p("c", 100, 50, 0, 20000), p("d", 100, 50, 0, 20000)}}},
			want:     8, mentioned: "pods metric rps"},
		{name: "cpu and a pods metric: a member left out of cpu alone still counts for the other", spec: spec(1, 20, cpuUtil(50), podsAvg("rps", "10")), current: 4,
			clusters: []cluster{{name: "a", pods: []pod{p("a", 100, 75, 0, 10000), p("b", 100, 75, 0, 10000)}},
				leftOutOf(cluster{name: "b", pods: []pod{p("c", 100, 0, 0, 10000), p("d", 100, 0, 0, 10000)}}, 2, 0, "metrics not readable: no metrics-server")},
			want: 6, mentioned: "from cpu resource; left out of the average (and no scale-down while they are): b (metrics not readable: no metrics-server)"},
		{name: "object metric, Value: each member's copy against the target, none above it", spec: spec(1, 20, objectValue("200")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 200000), withObject(cluster{name: "b", pods: pods("b", 2, 0)}, 200000)},
			want:     4, active: corev1.ConditionTrue},
		{name: "object metric, Value: members weighed by their ready pods", spec: spec(1, 20, objectValue("200")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 3, 0)}, 300000), withObject(cluster{name: "b", pods: append(pods("b", 1, 0), pending(p("x", 100, 0)))}, 100000)},
			want:     5},
		{name: "object metric, AverageValue: the members' values add up", spec: spec(1, 20, objectAvg("100")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 300000), withObject(cluster{name: "b", pods: pods("b", 2, 0)}, 300000)},
			want:     6, mentioned: "object metric rps of Ingress web"},
		{name: "object metric, AverageValue: a member left out counts at the others' value per pod", spec: spec(1, 20, objectAvg("100")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 300000), leftOutOf(cluster{name: "b", pods: pods("b", 2, 0)}, 1, 0, "no value of object metric rps of Ingress web")},
			want:     6, mentioned: "b (no value of object metric rps of Ingress web)"},
		{name: "object metric, Value: a member left out, the other above the target", spec: spec(1, 20, objectValue("200")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 300000), leftOutOf(cluster{name: "b", pods: pods("b", 2, 0)}, 1, 0, "object metric rps of Ingress web not readable: gone")},
			want:     6, mentioned: "b (object metric rps of Ingress web not readable: gone)"},
		{name: "object metric, Value: no scale-down while a member is left out", spec: spec(1, 20, objectValue("200")), current: 4,
			clusters: []cluster{withObject(cluster{name: "a", pods: pods("a", 2, 0)}, 10000), leftOutOf(cluster{name: "b", pods: pods("b", 2, 0)}, 1, 0, "no value of object metric rps of Ingress web")},
			want:     4},
		{name: "object metric read in no member: not active", spec: spec(1, 20, objectValue("200")), current: 4,
			clusters: []cluster{leftOutOf(cluster{name: "a", pods: pods("a", 2, 0)}, 1, 0, "no value of object metric rps of Ingress web")},
			want:     4, active: corev1.ConditionFalse, mentioned: "object metric rps of Ingress web: not read in any member"},
		{name: "an External metric: not active, the metric named and why", spec: spec(1, 20, external("queue_depth")), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 2, 100)}}, want: 4, active: corev1.ConditionFalse,
			mentioned: "external metric queue_depth: not read: an External metric describes something outside the clusters"},
		{name: "an External metric beside cpu above its target: cpu scales up", spec: spec(1, 20, cpuUtil(50), external("queue_depth")), current: 4,
			clusters: []cluster{{name: "a", pods: []pod{p("a", 100, 100, 0, 0), p("b", 100, 100, 0, 0), p("c", 100, 100, 0, 0), p("d", 100, 100, 0, 0)}}},
			want:     8, active: corev1.ConditionTrue},
		{name: "a container without a request: no utilization", spec: spec(1, 10, cpuUtil(50)), current: 2,
			clusters: []cluster{{name: "a", pods: []pod{{name: "x", request: []int64{0}, usage: []int64{10}, hasUsage: []bool{true}, requestErr: []string{"container app of pod x has no cpu request"}}}}},
			want:     2, active: corev1.ConditionFalse, mentioned: "no cpu request"},
		{name: "the fleet has no room for the replicas asked for: limited; the 4 pods running at twice the target ask for no more than 8", spec: spec(1, 20, cpuUtil(50)), current: 8,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 100)}}, unplaced: "0/3 clusters available: 3 insufficient cpu for one replica",
			want: 8, limited: ReasonNoRoomInFleet, limitedBy: "no room for 8 replicas of the target: the members run the placement from before, the scheduler says: 0/3 clusters available"},
		{name: "no room, and maxReplicas bounds the count too: the bound's reason, the scheduler's added", spec: spec(1, 10, cpuUtil(50)), current: 8,
			clusters: []cluster{{name: "a", pods: pods("a", 8, 100)}}, unplaced: "0/3 clusters available",
			want: 10, limited: "TooManyReplicas", limitedBy: "more than the maximum replica count; the fleet has no room for 8 replicas"},
		{name: "the fleet placed every replica: within range", spec: spec(1, 20, cpuUtil(50)), current: 4,
			clusters: []cluster{{name: "a", pods: pods("a", 4, 50)}}, want: 4, limited: "DesiredWithinRange"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := decide(input{spec: tc.spec, current: tc.current, status: tc.current, clusters: tc.clusters, history: tc.history, now: t0, tolerance: DefaultTolerance, downWindow: DefaultDownscaleWindow, unplaced: tc.unplaced})
			if o.desired != tc.want {
				t.Fatalf("desired = %d, want %d; conditions %+v", o.desired, tc.want, o.conditions)
			}
			got := map[autoscalingv2.HorizontalPodAutoscalerConditionType]condition{}
			for _, c := range o.conditions {
				got[c.kind] = c
			}
			if tc.active != "" && got[autoscalingv2.ScalingActive].status != tc.active {
				t.Errorf("ScalingActive = %+v, want %s", got[autoscalingv2.ScalingActive], tc.active)
			}
			if tc.limited != "" && got[autoscalingv2.ScalingLimited].reason != tc.limited {
				t.Errorf("ScalingLimited = %+v, want reason %s", got[autoscalingv2.ScalingLimited], tc.limited)
			}
			if !strings.Contains(got[autoscalingv2.ScalingLimited].message, tc.limitedBy) {
				t.Errorf("ScalingLimited message %q does not mention %q", got[autoscalingv2.ScalingLimited].message, tc.limitedBy)
			}
			if tc.able != "" && got[autoscalingv2.AbleToScale].reason != tc.able {
				t.Errorf("AbleToScale = %+v, want reason %s", got[autoscalingv2.AbleToScale], tc.able)
			}
			if !strings.Contains(got[autoscalingv2.ScalingActive].message, tc.mentioned) {
				t.Errorf("ScalingActive message %q does not mention %q", got[autoscalingv2.ScalingActive].message, tc.mentioned)
			}
			if (o.reason != "") != (o.desired != tc.current) {
				t.Errorf("reason %q for %d -> %d", o.reason, tc.current, o.desired)
			}
			for i := 1; i < len(o.clusters); i++ {
				if o.clusters[i-1].Name >= o.clusters[i].Name {
					t.Errorf("clusters not sorted: %+v", o.clusters)
				}
			}
		})
	}
}

func TestUtilizations(t *testing.T) {
	got := utilizations([]autoscalingv2.MetricSpec{cpuUtil(50), cpuUtil(60)}, []cluster{
		{name: "a", pods: []pod{p("x", 100, 30), p("y", 100, 50), pending(p("z", 100, -1))}},
		{name: "b", excluded: "metrics stale", pods: pods("b", 1, 0)},
	})
	if len(got) != 2 || got[0].Pods != 3 || got[0].ReadyPods != 2 || len(got[0].Resources) != 1 || *got[0].Resources[0].AverageUtilization != 40 {
		t.Fatalf("a: %+v", got)
	}
	if got[1].Excluded != "metrics stale" || len(got[1].Resources) != 0 {
		t.Fatalf("b: %+v", got[1])
	}
}

func TestCPUUnready(t *testing.T) {
	ready := func(status corev1.ConditionStatus, started, transition time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{StartTime: ptrTime(started), Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: status, LastTransitionTime: *ptrTime(transition)}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"no Ready condition", &corev1.Pod{}, true},
		{"young, ready before the sample's window", ready(corev1.ConditionTrue, t0.Add(-2*time.Minute), t0.Add(-time.Minute)), false},
		{"young, ready within the sample's window", ready(corev1.ConditionTrue, t0.Add(-2*time.Minute), t0.Add(-10*time.Second)), true},
		{"young, not ready", ready(corev1.ConditionFalse, t0.Add(-2*time.Minute), t0.Add(-time.Minute)), true},
		{"old, not ready but was once", ready(corev1.ConditionFalse, t0.Add(-time.Hour), t0.Add(-time.Minute)), false},
		{"old, never ready", ready(corev1.ConditionFalse, t0.Add(-time.Hour), t0.Add(-time.Hour+10*time.Second)), true},
	} {
		if got := cpuUnready(tc.pod, t0, 30*time.Second, t0); got != tc.want {
			t.Errorf("%s: cpuUnready = %v, want %v", tc.name, got, tc.want)
		}
	}
}
