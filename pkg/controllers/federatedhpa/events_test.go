package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func TestParseRescaleNote(t *testing.T) {
	for _, tc := range []struct {
		note string
		want Rescale
		ok   bool
	}{
		{RescaleNote(4, 6, "cpu resource above target"),
			Rescale{From: 4, HasFrom: true, To: 6, Reason: "cpu resource above target"}, true},
		{RescaleNote(6, 1, "All metrics below target; 2 clusters; left: none"), Rescale{From: 6, HasFrom: true, To: 1, Reason: "All metrics below target; 2 clusters; left: none"}, true},
		{RescaleNote(3, 0, ""), Rescale{From: 3, HasFrom: true, To: 0}, true},
		// A HorizontalPodAutoscaler's note, and this controller's before
		// it said the old size: the new size alone.
		{"New size: 5; reason: memory resource above target", Rescale{To: 5, Reason: "memory resource above target"}, true},
		{"New size: 5; reason: old size: 2; the reason", Rescale{To: 5, Reason: "old size: 2; the reason"}, true},
		{"", Rescale{}, false},
		{"Scaled up to 5", Rescale{}, false},
		{"New size: five; reason: x", Rescale{}, false},
		{"New size: -1; reason: x", Rescale{}, false},
		{"New size: 5", Rescale{}, false},
		{"New size: 5; because: x", Rescale{}, false},
		{"New size: 5; old size: two; reason: x", Rescale{}, false},
		{"New size: 5; old size: 99999999999; reason: x", Rescale{}, false},
		{"New size: 5; old size: 2", Rescale{}, false},
		{"new size: 5; reason: x", Rescale{}, false},
	} {
		got, ok := ParseRescaleNote(tc.note)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRescaleNote(%q) = %+v, %v; want %+v, %v", tc.note, got, ok, tc.want, tc.ok)
		}
	}
}

// sink is an events.EventSink keeping what it is sent.
type sink struct {
	mu      sync.Mutex
	created []*eventsv1.Event
	patched int
}

func (s *sink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created = append(s.created, e.DeepCopy())
	return e, nil
}

func (s *sink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) { return e, nil }

func (s *sink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patched++
	return e, nil
}

// rescales are the SuccessfulRescale notes created so far, parsed.
func (s *sink) rescales() []Rescale {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Rescale
	for _, e := range s.created {
		if e.Reason != EventSuccessfulRescale {
			continue
		}
		r, ok := ParseRescaleNote(e.Note)
		if !ok {
			r = Rescale{Reason: "unparsed: " + e.Note}
		}
		out = append(out, r)
	}
	return out
}

// oneMember serves n ready pods of app=web in shop, each requesting 100m
// CPU and using 100m, sampled at now().
type oneMember struct {
	mu  sync.Mutex
	n   int
	now func() time.Time
}

func (m *oneMember) pods() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func (m *oneMember) Pods(context.Context, *clusterv1alpha1.Cluster, Workload) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for i := range m.pods() {
		p := k8sPod(fmt.Sprintf("web-%d", i), corev1.PodRunning, true)
		p.Namespace, p.Labels = "shop", map[string]string{"app": "web"}
		out = append(out, p)
	}
	return out, nil
}

func (m *oneMember) PodMetrics(context.Context, *clusterv1alpha1.Cluster, Workload) ([]metricsv1beta1.PodMetrics, error) {
	var out []metricsv1beta1.PodMetrics
	for i := range m.pods() {
		pm := podMetrics(fmt.Sprintf("web-%d", i), 100, m.now())
		pm.Namespace = "shop"
		out = append(out, pm)
	}
	return out, nil
}

func (m *oneMember) CustomMetric(context.Context, *clusterv1alpha1.Cluster, Workload, workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	return nil, errors.New("no custom metrics API")
}

func (m *oneMember) HorizontalPodAutoscalers(context.Context, *clusterv1alpha1.Cluster, Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	return nil, nil
}

// TestRescaleEventsTellTheHistory: each rescale is an event of its own
// whose note says the count before and after, as the real event
// recorder sends them, even when the controller reads the FederatedHPA
// from a cache that has not seen its last status write (the same
// resourceVersion at both rescales, which would fold the second event
// into the first's series and lose its counts).
func TestRescaleEventsTellTheHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stale: every read of the FederatedHPA returns resourceVersion 1.
		stale bool
	}{
		{name: "fresh reads"},
		{name: "stale cache", stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			clock := func() time.Time { return now }
			hpa := &autoscalingv1alpha1.FederatedHPA{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec: autoscalingv1alpha1.FederatedHPASpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					MinReplicas:    ptr.To[int32](1), MaxReplicas: 20, Metrics: []autoscalingv2.MetricSpec{cpuUtil(50)},
				},
			}
			deploy := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}},
				Status: appsv1.DeploymentStatus{Replicas: 2},
			}
			rb := &workv1alpha1.ResourceBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("Deployment", "web")},
				Spec:       workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 2}}},
			}
			m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
			funcs := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				err := c.Get(ctx, key, obj, opts...)
				if _, ok := obj.(*autoscalingv1alpha1.FederatedHPA); ok && tc.stale {
					obj.SetResourceVersion("1")
				}
				return err
			}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(hpa, deploy, rb, m1).
				WithStatusSubresource(&autoscalingv1alpha1.FederatedHPA{}).WithInterceptorFuncs(funcs).Build()
			s := &sink{}
			b := events.NewBroadcaster(s)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
				t.Fatal(err)
			}
			defer b.Shutdown()
			member := &oneMember{n: 2, now: clock}
			r := &Reconciler{client: c, recorder: b.NewRecorder(scheme.Scheme, "shepherd-federatedhpa"),
				opts: Options{Members: member, Now: clock}.withDefaults(), history: map[types.NamespacedName]history{}}
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}

			// 2 pods at twice the target: 2 -> 4; then 4 pods, still at
			// twice the target a minute later: 4 -> 8.
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			member.mu.Lock()
			member.n = 4
			member.mu.Unlock()
			now = now.Add(time.Minute)
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(deploy), got); err != nil || ptr.Deref(got.Spec.Replicas, 0) != 8 {
				t.Fatalf("the Deployment has %d replicas (%v), want 8", ptr.Deref(got.Spec.Replicas, 0), err)
			}
			want := []Rescale{{From: 2, HasFrom: true, To: 4}, {From: 4, HasFrom: true, To: 8}}
			deadline := time.Now().Add(10 * time.Second)
			var rescales []Rescale
			for {
				rescales = s.rescales()
				for i := range rescales {
					rescales[i].Reason = ""
				}
				if len(rescales) >= len(want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !slices.Equal(rescales, want) {
				t.Errorf("SuccessfulRescale events %+v, want %+v", rescales, want)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.patched != 0 {
				t.Errorf("%d events were folded into a series", s.patched)
			}
			for _, e := range s.created {
				if e.Reason != EventSuccessfulRescale {
					continue
				}
				if e.Related == nil || e.Related.Kind != "Deployment" || e.Related.Name != "web" {
					t.Errorf("event %q relates to %+v, want the Deployment", e.Note, e.Related)
				}
				// What the dashboard reads a FederatedHPA's history by.
				if r := e.Regarding; e.Namespace != "shop" || r.APIVersion != "autoscaling.shepherd.io/v1alpha1" || r.Kind != "FederatedHPA" ||
					r.Namespace != "shop" || r.Name != "web" {
					t.Errorf("event %q recorded in %q regards %+v, want FederatedHPA shop/web of autoscaling.shepherd.io, recorded in shop", e.Note, e.Namespace, r)
				}
			}
		})
	}
}
