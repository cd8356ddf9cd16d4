package podsample

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

var (
	rps     = workv1alpha1.CustomMetricRequest{Name: "rps"}
	ingress = workv1alpha1.CustomMetricRequest{Name: "requests", Object: &workv1alpha1.CustomMetricObject{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"}}
)

// value is pod's (or an object's) value of a metric at t0-age.
func value(kind, name, q string, age time.Duration) custommetricsv1beta2.MetricValue {
	return custommetricsv1beta2.MetricValue{DescribedObject: corev1.ObjectReference{Kind: kind, Name: name},
		Timestamp: metav1.NewTime(t0.Add(-age)), Value: resource.MustParse(q)}
}

// TestCustomMetricsRoundTrip: the hub reads back from the sample the
// values the agent read, for the sample's pods only, stamped with the
// newest time; an Object metric's one value; the agent's error as it was;
// a metric the sample lacks (the agent has not seen the request yet) is
// not reported, never read as no values.
func TestCustomMetricsRoundTrip(t *testing.T) {
	many := make([]corev1.Pod, workv1alpha1.MaxPodMetricsPods+1)
	for i := range many {
		many[i] = pod(fmt.Sprintf("p%04d", i), corev1.PodRunning, true, 100)
	}
	s := New(Input{Pods: []corev1.Pod{pod("b", corev1.PodRunning, true, 100), pod("a", corev1.PodRunning, true, 100)}, Target: target, Now: t0,
		CustomMetrics: []CustomInput{
			{Request: rps, Values: []custommetricsv1beta2.MetricValue{value("Pod", "b", "2", 30*time.Second), value("Pod", "a", "1500m", 10*time.Second), value("Pod", "other", "9", 0)}},
			{Request: ingress, Values: []custommetricsv1beta2.MetricValue{value("Ingress", "main", "10k", 20*time.Second)}},
			{Request: workv1alpha1.CustomMetricRequest{Name: "down"}, Err: errors.New("the server could not find the metric down for pods")},
		}})
	got, err := CustomMetric(s, rps)
	if err != nil || len(got) != 2 || got[0].DescribedObject.Name != "a" || got[0].Value.MilliValue() != 1500 || got[1].Value.MilliValue() != 2000 {
		t.Fatalf("rps: %+v, %v; want a=1500m and b=2 (not the pod outside the sample)", got, err)
	}
	if !got[1].Timestamp.Time.Equal(t0.Add(-10 * time.Second)) {
		t.Errorf("rps stamped %s, want the newest value's time", got[1].Timestamp)
	}
	obj, err := CustomMetric(s, ingress)
	if err != nil || len(obj) != 1 || obj[0].Value.Value() != 10000 || obj[0].DescribedObject.Kind != "Ingress" {
		t.Fatalf("ingress: %+v, %v", obj, err)
	}
	if _, err := CustomMetric(s, workv1alpha1.CustomMetricRequest{Name: "down"}); err == nil || !strings.Contains(err.Error(), "could not find the metric down") {
		t.Errorf("down: %v, want the agent's error", err)
	}
	for _, req := range []workv1alpha1.CustomMetricRequest{{Name: "rps", Selector: "verb=GET"}, {Name: "latency"},
		{Name: "requests", Object: &workv1alpha1.CustomMetricObject{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "other"}}} {
		if _, err := CustomMetric(s, req); !errors.Is(err, ErrNotReported) {
			t.Errorf("%s: %v, want not reported", req, err)
		}
	}

	// More pods than the bound: a Pods metric says its values are
	// incomplete; an Object metric, which does not depend on the pods,
	// does not.
	s = New(Input{Pods: many, Target: target, Now: t0, CustomMetrics: []CustomInput{
		{Request: rps, Values: []custommetricsv1beta2.MetricValue{value("Pod", "p0000", "1", 0)}},
		{Request: ingress, Values: []custommetricsv1beta2.MetricValue{value("Ingress", "main", "1", 0)}}}})
	if _, err := CustomMetric(s, rps); err == nil || !strings.Contains(err.Error(), "only the first 500 reported") {
		t.Errorf("rps of too many pods: %v", err)
	}
	if _, err := CustomMetric(s, ingress); err != nil {
		t.Errorf("ingress beside too many pods: %v", err)
	}
}

// TestReadCustomMetric reads a member's custom metrics API as the agent
// and the hub do: the path and parameters of a Pods and an Object metric,
// the API's NotFound kept, and an object the member cannot map, or that
// is not namespaced, or a reply of several values for one object, refused
// saying so.
func TestReadCustomMetric(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/missing"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the metric missing for pods"}`))
		case strings.Contains(r.URL.Path, "/services/"):
			_, _ = w.Write([]byte(`{"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","items":[{"value":"1"},{"value":"2"}]}`))
		default:
			_, _ = w.Write([]byte(`{"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","items":[{"describedObject":{"kind":"Pod","name":"a"},"metric":{"name":"rps"},"timestamp":"2030-01-01T12:00:00Z","value":"3"}]}`))
		}
	}))
	defer srv.Close()
	kube := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot)
	ctx := context.Background()

	vs, err := ReadCustomMetric(ctx, kube, mapper, "shop", "app=web", workv1alpha1.CustomMetricRequest{Name: "rps", Selector: "verb=GET"})
	if err != nil || len(vs) != 1 || vs[0].Value.Value() != 3 {
		t.Fatalf("pods metric: %+v, %v", vs, err)
	}
	if _, err := ReadCustomMetric(ctx, kube, mapper, "shop", "app=web", ingress); err != nil {
		t.Fatalf("object metric: %v", err)
	}
	want := []string{
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/%2A/rps?labelSelector=app%3Dweb&metricLabelSelector=verb%3DGET",
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/ingresses.networking.k8s.io/main/requests",
	}
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("asked\n%s\nwant\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	if _, err := ReadCustomMetric(ctx, kube, mapper, "shop", "app=web", workv1alpha1.CustomMetricRequest{Name: "missing"}); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "does a metrics adapter in the member serve the metric?") {
		t.Errorf("a metric the member does not serve: %v, want NotFound naming it", err)
	}
	for _, tc := range []struct {
		obj  workv1alpha1.CustomMetricObject
		want string
	}{
		{workv1alpha1.CustomMetricObject{APIVersion: "example.com/v1", Kind: "Queue", Name: "q"}, "the member has no kind Queue in example.com/v1"},
		{workv1alpha1.CustomMetricObject{APIVersion: "v1", Kind: "Node", Name: "n1"}, "Node is not namespaced"},
		{workv1alpha1.CustomMetricObject{APIVersion: "v1", Kind: "Service", Name: "web"}, "gave 2 values for the object, want one"},
		{workv1alpha1.CustomMetricObject{APIVersion: "a/b/c", Kind: "Service", Name: "web"}, `apiVersion "a/b/c"`},
	} {
		_, err := ReadCustomMetric(ctx, kube, mapper, "shop", "app=web", workv1alpha1.CustomMetricRequest{Name: "m", Object: &tc.obj})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.obj, err, tc.want)
		}
	}
}
