package federatedhpa

import (
	"context"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
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
		{name: "stale sample: the agent stopped reporting", work: true, sample: sample(t0.Add(-5*time.Minute), nil),
			wantExcluded: "metrics stale: the agent's newest sample is 5m0s old"},
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
				got, excluded = samples([]autoscalingv2.MetricSpec{cpuUtil(50)}, pods, pms, err, t0, maxAge)
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

// TestStale: a sample is stale once older than the bound, on the hub's
// clock; one stamped ahead of it (clocks apart) is not.
func TestStale(t *testing.T) {
	for _, tc := range []struct {
		age  time.Duration
		want string
	}{
		{0, ""}, {2 * time.Minute, ""}, {-30 * time.Second, ""},
		{2*time.Minute + time.Second, "metrics stale: the agent's newest sample is 2m1s old"},
	} {
		err := stale(&workv1alpha1.PodMetricsSample{SampleTime: metav1.NewTime(t0.Add(-tc.age))}, t0, 2*time.Minute)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || (err != nil && !strings.HasPrefix(exclusion(err, "unreachable: "), "metrics stale")) {
			t.Errorf("age %s: %q, want %q", tc.age, got, tc.want)
		}
	}
}
