package federatedhpa

import (
	"context"
	"errors"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/podsample"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestPullMembers: a Pull member is measured from the sample its agent
// reported in the target's Work, as a Push member from its API; a missing
// or stale sample, or one whose metrics the agent could not read, leaves
// the member out and says why.
func TestPullMembers(t *testing.T) {
	w := Workload{Namespace: "shop", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Ref: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	// sample is what the agent read at sampled: two ready pods using
	// 60m and 80m of their 100m, sampled 15 s before.
	sample := func(sampled time.Time, metricsErr error) *workv1alpha1.PodMetricsSample {
		return podsample.New(podsample.Input{Selector: "app=web", Now: sampled, Target: w.Ref, MetricsErr: metricsErr,
			Pods:       []corev1.Pod{k8sPod("web-b", corev1.PodRunning, true), k8sPod("web-a", corev1.PodRunning, true)},
			PodMetrics: []metricsv1beta1.PodMetrics{podMetrics("web-a", 60, sampled.Add(-15*time.Second)), podMetrics("web-b", 80, sampled.Add(-15*time.Second))},
			Autoscalers: []autoscalingv2.HorizontalPodAutoscaler{{ObjectMeta: metav1.ObjectMeta{Name: "local"},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: w.Ref}}}})
	}
	const maxAge = 2 * time.Minute
	cases := []struct {
		name         string
		work         bool
		sample       *workv1alpha1.PodMetricsSample
		wantExcluded string
		wantPods     int
		wantUsage    int64 // summed milli-CPU of the pods with usage
		wantHPAs     int
	}{
		{name: "fresh sample", work: true, sample: sample(t0.Add(-10*time.Second), nil), wantPods: 2, wantUsage: 140, wantHPAs: 1},
		{name: "metrics at the staleness bound", work: true, sample: sample(t0.Add(-maxAge+15*time.Second), nil), wantPods: 2, wantUsage: 140, wantHPAs: 1},
		{name: "fresh sample of metrics older than the bound", work: true, sample: sample(t0.Add(-maxAge), nil),
			wantExcluded: "metrics stale: the newest sample is 2m15s old", wantPods: 2, wantHPAs: 1},
		{name: "metrics API of the member down", work: true, sample: sample(t0.Add(-5*time.Second), errTest("the server is currently unable to handle the request")),
			wantExcluded: "metrics not readable: metrics.k8s.io not readable: the server is currently unable to handle the request", wantPods: 2, wantHPAs: 1},
		{name: "no sample yet", work: true, wantExcluded: "no metrics reported by the agent yet"},
		{name: "no Work yet", wantExcluded: "no Work of the target in the Pull cluster yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			if tc.work {
				work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workKey(cl.Name, w).Namespace, Name: workKey(cl.Name, w).Name}}
				work.Status.PodMetrics = tc.sample
				b = b.WithObjects(work)
			}
			m := ByMode(nil, NewPullMembers(b.Build(), maxAge, func() time.Time { return t0 }))
			ctx := context.Background()
			var got []pod
			excluded := ""
			pods, err := m.Pods(ctx, cl, w)
			if err != nil {
				excluded = exclusion(err, "unreachable: ")
			} else {
				pms, err := m.PodMetrics(ctx, cl, w)
				c := samples([]autoscalingv2.MetricSpec{cpuUtil(50)}, reading{pods: pods, podMetrics: pms, podMetricsErr: err}, t0, maxAge)
				got, excluded = c.pods, c.why()
			}
			if excluded != tc.wantExcluded {
				t.Fatalf("excluded %q, want %q", excluded, tc.wantExcluded)
			}
			if len(got) != tc.wantPods {
				t.Fatalf("%d pods, want %d", len(got), tc.wantPods)
			}
			var usage int64
			for _, p := range got {
				if p.hasUsage[0] {
					usage += p.usage[0]
				}
				if p.request[0] != 100 || p.unreadyCPU || p.pending || p.ignored {
					t.Errorf("pod %+v, want a ready pod requesting 100m", p)
				}
			}
			if excluded == "" && usage != tc.wantUsage {
				t.Errorf("usage %dm, want %dm", usage, tc.wantUsage)
			}
			if hpas, err := m.HorizontalPodAutoscalers(ctx, cl, w); len(hpas) != tc.wantHPAs || (err == nil && tc.wantHPAs > 0 && !sameTarget(hpas[0].Spec.ScaleTargetRef, w.Ref)) {
				t.Errorf("autoscalers %+v (%v), want %d of the target", hpas, err, tc.wantHPAs)
			}
		})
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// TestSampleAgeUnderClockSkew: a Pull member's sample, stamped on its
// agent's clock two sync periods or two staleness bounds behind or ahead
// of the hub's, is used for the full bound after the hub first read it,
// on the hub's clock, and is stale a second later if the agent wrote no
// other: its sampleTime is never compared with the hub's clock. Compared
// with it, a sample of an agent behind by more than the bound would be
// stale on arrival, and one of an agent ahead used too long.
func TestSampleAgeUnderClockSkew(t *testing.T) {
	const maxAge = 2 * time.Minute
	w := Workload{Namespace: "shop", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Ref: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	for _, tc := range []struct {
		name string
		skew time.Duration // the agent's clock minus the hub's
	}{
		{"the agent's clock right", 0},
		{"the agent's clock two sync periods behind", -2 * DefaultSyncPeriod},
		{"the agent's clock two sync periods ahead", 2 * DefaultSyncPeriod},
		{"the agent's clock two bounds behind", -2 * maxAge},
		{"the agent's clock two bounds ahead", 2 * maxAge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workKey(cl.Name, w).Namespace, Name: workKey(cl.Name, w).Name}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(work).WithStatusSubresource(work).Build()
			hubNow := t0
			m := NewPullMembers(c, maxAge, func() time.Time { return hubNow })
			ctx := context.Background()
			// read is why the member is left out at the hub's time at
			// (since t0), "" when it is measured.
			read := func(at time.Duration) string {
				hubNow = t0.Add(at)
				if _, err := m.Pods(ctx, cl, w); err != nil {
					return exclusion(err, "unreachable: ")
				}
				return ""
			}
			// report writes the agent's sample, stamped on its clock.
			report := func(at time.Duration) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(work), work); err != nil {
					t.Fatal(err)
				}
				work.Status.PodMetrics = podsample.New(podsample.Input{Selector: "app=web", Now: t0.Add(at + tc.skew), Target: w.Ref,
					Pods: []corev1.Pod{k8sPod("web-a", corev1.PodRunning, true)}})
				if err := c.Status().Update(ctx, work); err != nil {
					t.Fatal(err)
				}
			}
			for _, step := range []struct {
				at, reportAt time.Duration // reportAt < 0: no new sample
				want         string
			}{
				{at: 0, reportAt: -1, want: "no metrics reported by the agent yet"},
				{at: 10 * time.Second, reportAt: 5 * time.Second},
				{at: 10*time.Second + maxAge, reportAt: -1},
				{at: 11*time.Second + maxAge, reportAt: -1, want: "metrics stale: the agent's newest sample was first read 2m1s ago"},
				{at: 12*time.Second + maxAge, reportAt: 12*time.Second + maxAge},
			} {
				if step.reportAt >= 0 {
					report(step.reportAt)
				}
				if got := read(step.at); got != step.want {
					t.Errorf("at %s: left out %q, want %q", step.at, got, step.want)
				}
			}
		})
	}
}

// TestPullMembersCustomMetrics: a Pull member's Pods and Object metrics
// are what its agent read; a metric the agent has not reported yet (the
// Work asked for it since its last sample), or could not read, leaves the
// member out of that metric alone, saying why.
func TestPullMembersCustomMetrics(t *testing.T) {
	w := Workload{Namespace: "shop", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Ref: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	rps, ingress, latency := podsAvg("rps", "10"), objectValue("200"), podsAvg("latency", "1")
	req := func(m autoscalingv2.MetricSpec) workv1alpha1.CustomMetricRequest {
		r, err := customRequest(m)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sample := podsample.New(podsample.Input{Selector: "app=web", Now: t0.Add(-5 * time.Second), Target: w.Ref,
		Pods: []corev1.Pod{k8sPod("web-a", corev1.PodRunning, true), k8sPod("web-b", corev1.PodRunning, true)},
		CustomMetrics: []podsample.CustomInput{
			{Request: req(rps), Values: []custommetricsv1beta2.MetricValue{value("web-a", "12", t0.Add(-10*time.Second)), value("web-b", "8", t0.Add(-10*time.Second))}},
			{Request: req(ingress), Values: []custommetricsv1beta2.MetricValue{value("web", "250", t0.Add(-10*time.Second))}},
			{Request: req(latency), Err: errors.New("custom.metrics.k8s.io/v1beta2: the server could not find the metric latency for pods")},
		}})
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workKey(cl.Name, w).Namespace, Name: workKey(cl.Name, w).Name}}
	work.Status.PodMetrics = sample
	m := ByMode(nil, NewPullMembers(fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(work).Build(), 2*time.Minute, func() time.Time { return t0 }))
	metrics := []autoscalingv2.MetricSpec{rps, ingress, latency, podsAvg("queue", "5")}
	r := &Reconciler{opts: Options{Members: m}}
	pods, err := m.Pods(context.Background(), cl, w)
	if err != nil {
		t.Fatal(err)
	}
	c := samples(metrics, r.read(context.Background(), cl, w, metrics, pods), t0, 2*time.Minute)
	want := []string{"", "", "pods metric latency not readable: custom.metrics.k8s.io/v1beta2: the server could not find the metric latency for pods",
		"pods metric queue not readable: not reported by the agent yet"}
	for i := range metrics {
		if c.out(i) != want[i] {
			t.Errorf("metric %d: left out %q, want %q", i, c.out(i), want[i])
		}
	}
	if len(c.pods) != 2 || c.pods[0].usage[0] != 12000 || c.pods[1].usage[0] != 8000 || !c.pods[0].hasUsage[0] {
		t.Errorf("pods %+v, want web-a at 12 and web-b at 8", c.pods)
	}
	if v, ok := c.objectValue(1); !ok || v != 250000 {
		t.Errorf("the Ingress's value %d (%v), want 250", v, ok)
	}
}

// TestAskSample: the controller asks a Pull member's agent for the
// custom metrics its FederatedHPA reads in the Work's annotation, beside
// the label, changes it when the metrics change, and removes both once
// the Work is no longer measured.
func TestAskSample(t *testing.T) {
	w := Workload{Namespace: "shop", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		Ref: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	key := workKey("edge-1", w)
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Labels: map[string]string{workv1alpha1.LabelBindingNamespace: "shop"}, Annotations: map[string]string{"other": "kept"}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(work).Build()
	r := &Reconciler{client: c}
	ctx := context.Background()
	get := func() *workv1alpha1.Work {
		got := &workv1alpha1.Work{}
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	rps := workv1alpha1.CustomMetricRequest{Name: "rps"}
	for _, tc := range []struct {
		name   string
		custom []workv1alpha1.CustomMetricRequest
	}{
		{"a Pods metric", []workv1alpha1.CustomMetricRequest{rps}},
		{"and an Object metric", []workv1alpha1.CustomMetricRequest{rps, {Name: "requests", Object: &workv1alpha1.CustomMetricObject{APIVersion: "v1", Kind: "Service", Name: "web"}}}},
		{"no custom metrics any more", nil},
	} {
		if _, err := r.askSample(ctx, "web", w, "edge-1", tc.custom); err != nil {
			t.Fatal(err)
		}
		got := get()
		asked, err := workv1alpha1.ParseCustomMetrics(got.Annotations[workv1alpha1.AnnotationCustomMetrics])
		if err != nil || got.Labels[workv1alpha1.LabelPodMetrics] != "web" || len(asked) != len(tc.custom) || got.Annotations["other"] != "kept" {
			t.Errorf("%s: labels %v annotations %v (%v)", tc.name, got.Labels, got.Annotations, err)
		}
		if _, present := got.Annotations[workv1alpha1.AnnotationCustomMetrics]; present != (len(tc.custom) > 0) {
			t.Errorf("%s: annotation present %v", tc.name, present)
		}
	}
	if _, err := r.askSample(ctx, "web", w, "edge-1", []workv1alpha1.CustomMetricRequest{rps}); err != nil {
		t.Fatal(err)
	}
	if err := r.releaseSamples(ctx, "shop", "web", nil); err != nil {
		t.Fatal(err)
	}
	got := get()
	if _, labelled := got.Labels[workv1alpha1.LabelPodMetrics]; labelled || got.Annotations[workv1alpha1.AnnotationCustomMetrics] != "" || got.Annotations["other"] != "kept" {
		t.Errorf("released: labels %v annotations %v, want neither the label nor the custom metrics", got.Labels, got.Annotations)
	}
}
