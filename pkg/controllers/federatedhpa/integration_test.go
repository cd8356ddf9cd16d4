package federatedhpa_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

var (
	cli     client.Client
	members = &fakeMembers{clusters: map[string]*fakeMember{}}
)

func TestMain(m *testing.M) {
	code := suite.Main(m)
	liveFleet.Stop()
	os.Exit(code)
}

// suite starts a real hub with the FederatedHPA controller, whose members
// are fakeMembers (pods and PodMetrics set by each test).
var suite = testenv.Shared{
	Prefix: "shepherd-federatedhpa-",
	Before: func(h *testenv.Hub) (func(), error) {
		var err error
		if cli, err = client.New(h.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, err
		}
		m, err := h.StartManager(func(mgr ctrl.Manager) error {
			return federatedhpa.Setup(controllerdeps.Deps{Manager: mgr}, federatedhpa.Options{SyncPeriod: 300 * time.Millisecond, Members: members})
		})
		if err != nil {
			return nil, err
		}
		return func() { _ = m.Stop() }, nil
	},
}

// fakeMember is one member's pods, metrics and autoscalers.
type fakeMember struct {
	pods    []corev1.Pod
	metrics []metricsv1beta1.PodMetrics
	// custom are custom metrics' values by request (its String); one it
	// lacks is not served.
	custom map[string][]custommetricsv1beta2.MetricValue
	hpas   []autoscalingv2.HorizontalPodAutoscaler
	err    error
}

type fakeMembers struct {
	mu       sync.Mutex
	clusters map[string]*fakeMember
}

func (f *fakeMembers) set(cluster string, m *fakeMember) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clusters[cluster] = m
}

func (f *fakeMembers) get(cluster string) (*fakeMember, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.clusters[cluster]
	if m == nil {
		return nil, fmt.Errorf("no member %s", cluster)
	}
	return m, m.err
}

func (f *fakeMembers) Pods(_ context.Context, c *clusterv1alpha1.Cluster, w federatedhpa.Workload) ([]corev1.Pod, error) {
	m, err := f.get(c.Name)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(m.pods), func(p corev1.Pod) bool {
		return p.Namespace != w.Namespace || !w.Selector.Matches(labels.Set(p.Labels))
	}), nil
}

func (f *fakeMembers) PodMetrics(_ context.Context, c *clusterv1alpha1.Cluster, _ federatedhpa.Workload) ([]metricsv1beta1.PodMetrics, error) {
	m, err := f.get(c.Name)
	if err != nil {
		return nil, err
	}
	return m.metrics, nil
}

func (f *fakeMembers) CustomMetric(_ context.Context, c *clusterv1alpha1.Cluster, _ federatedhpa.Workload, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	m, err := f.get(c.Name)
	if err != nil {
		return nil, err
	}
	vs, ok := m.custom[req.String()]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "custom.metrics.k8s.io", Resource: "pods"}, req.Name)
	}
	return vs, nil
}

func (f *fakeMembers) HorizontalPodAutoscalers(_ context.Context, c *clusterv1alpha1.Cluster, _ federatedhpa.Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	m, err := f.get(c.Name)
	if err != nil {
		return nil, err
	}
	return m.hpas, nil
}

// member is n ready pods of app=web in ns requesting 100m CPU, each using
// milliCPU, sampled at sampled.
func member(ns string, n int, milliCPU int64, sampled time.Time) *fakeMember {
	m := &fakeMember{}
	started := metav1.NewTime(time.Now().Add(-time.Hour))
	for i := range n {
		name := fmt.Sprintf("web-%d", i)
		m.pods = append(m.pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}},
		})
		m.metrics = append(m.metrics, metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Timestamp: metav1.NewTime(sampled), Window: metav1.Duration{Duration: 30 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}}}})
	}
	return m
}

// TestScalesTheTemplateFromEveryMember: a Deployment running one pod in
// each of two members at 100% of its CPU request, against a 50% target,
// is scaled from 2 to 4 on the hub (spec.replicas alone, by the
// controller's field manager); the status names both clusters' utilization,
// a member HorizontalPodAutoscaler of the same workload is reported, and a
// member whose metrics are stale is left out and named.
func TestScalesTheTemplateFromEveryMember(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	ns := "fhpa-scale"
	if err := cli.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"fhpa-a", "fhpa-b"} {
		if err := testenv.CreateReadyCluster(ctx, cli, c, nil); err != nil {
			t.Fatal(err)
		}
		members.set(c, member(ns, 1, 100, time.Now()))
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}}}
	if err := cli.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-deployment"}, Spec: workv1alpha1.BindingSpec{
		Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web", UID: string(dep.UID)},
		Replicas: 2, Clusters: []workv1alpha1.TargetCluster{{Name: "fhpa-b", Replicas: 1}, {Name: "fhpa-a", Replicas: 1}}}}
	if err := cli.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: autoscalingv1alpha1.FederatedHPASpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}}}}
	if err := cli.Create(ctx, fhpa); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the Deployment scaled to 4", func() error {
		got := &appsv1.Deployment{}
		if err := cli.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil {
			return err
		}
		if *got.Spec.Replicas != 4 {
			return fmt.Errorf("replicas %d", *got.Spec.Replicas)
		}
		for _, mf := range got.ManagedFields {
			if mf.Manager == federatedhpa.FieldManager && strings.Contains(string(mf.FieldsV1.Raw), "replicas") {
				return nil
			}
		}
		return fmt.Errorf("no managed fields of %s: %+v", federatedhpa.FieldManager, got.ManagedFields)
	})
	status := func(check func(autoscalingv1alpha1.FederatedHPAStatus) error) func() error {
		return func() error {
			got := &autoscalingv1alpha1.FederatedHPA{}
			if err := cli.Get(ctx, client.ObjectKeyFromObject(fhpa), got); err != nil {
				return err
			}
			return check(got.Status)
		}
	}
	cond := func(st autoscalingv1alpha1.FederatedHPAStatus, kind autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
		for _, c := range st.Conditions {
			if c.Type == kind {
				return c
			}
		}
		return autoscalingv2.HorizontalPodAutoscalerCondition{}
	}
	testenv.Eventually(t, 30*time.Second, "per-cluster utilization, sorted", status(func(st autoscalingv1alpha1.FederatedHPAStatus) error {
		if len(st.Clusters) != 2 || st.Clusters[0].Name != "fhpa-a" || st.Clusters[1].Name != "fhpa-b" || st.LastScaleTime == nil {
			return fmt.Errorf("status %+v", st)
		}
		for _, c := range st.Clusters {
			if len(c.Resources) != 1 || c.Resources[0].AverageUtilization == nil || *c.Resources[0].AverageUtilization != 100 {
				return fmt.Errorf("cluster %+v", c)
			}
		}
		return nil
	}))

	// A member autoscaler of the same Deployment is reported.
	b := member(ns, 1, 100, time.Now())
	b.hpas = []autoscalingv2.HorizontalPodAutoscaler{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-local"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 3}}}
	members.set("fhpa-b", b)
	testenv.Eventually(t, 30*time.Second, "MemberAutoscalerConflict", status(func(st autoscalingv1alpha1.FederatedHPAStatus) error {
		if c := cond(st, autoscalingv1alpha1.ConditionMemberAutoscalerConflict); c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "fhpa-b/web-local") {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	}))

	// Stale metrics in fhpa-b: left out and named, and no scale-down on
	// fhpa-a's idle pod alone.
	members.set("fhpa-a", member(ns, 1, 1, time.Now()))
	members.set("fhpa-b", member(ns, 1, 0, time.Now().Add(-10*time.Minute)))
	testenv.Eventually(t, 30*time.Second, "fhpa-b left out", status(func(st autoscalingv1alpha1.FederatedHPAStatus) error {
		if len(st.Clusters) != 2 || !strings.Contains(st.Clusters[1].Excluded, "metrics stale") {
			return fmt.Errorf("clusters %+v", st.Clusters)
		}
		if c := cond(st, autoscalingv1alpha1.ConditionScalingActive); !strings.Contains(c.Message, "fhpa-b (metrics stale") {
			return fmt.Errorf("ScalingActive %+v", c)
		}
		return nil
	}))
	got := &appsv1.Deployment{}
	if err := cli.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil || *got.Spec.Replicas != 4 {
		t.Fatalf("replicas %v, err %v: want 4, no scale-down while a member is left out", got.Spec.Replicas, err)
	}
}
