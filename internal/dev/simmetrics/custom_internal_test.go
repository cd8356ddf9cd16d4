package simmetrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
)

// TestHandlerCustomMetrics: custom.metrics.k8s.io/v1beta2 as a metrics
// adapter serves it, from the knob: a Pods metric's values of the
// reporting pods a label selector selects, or of one pod; an Object
// metric's value of a namespaced object; the override ConfigMap over the
// annotations; and NotFound for a metric no pod or object has, BadRequest
// for a selector that does not parse, a Warning Event for a value that is
// not one.
func TestHandlerCustomMetrics(t *testing.T) {
	web3 := testPod("web-3", "web", corev1.PodRunning, map[string]string{MetricAnnotationPrefix + "rps": "1500m"})
	web1 := testPod("web-1", "web", corev1.PodRunning, map[string]string{MetricAnnotationPrefix + "rps": "12"})
	web2 := testPod("web-2", "web", corev1.PodPending, map[string]string{MetricAnnotationPrefix + "rps": "50"})
	neg := testPod("neg", "neg", corev1.PodRunning, map[string]string{MetricAnnotationPrefix + "rps": "-3"})
	s, kube := testServer(t, web3, neg)
	ctx := context.Background()
	for _, p := range []*corev1.Pod{web1, web2} {
		if _, err := kube.CoreV1().Pods("shop").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	values := func(path string) (int, []string) {
		t.Helper()
		w := serve(s, proxied(customPath+path, "front-proxy-client"))
		if w.Code != http.StatusOK {
			return w.Code, []string{w.Body.String()}
		}
		list := &custommetricsv1beta2.MetricValueList{}
		if err := json.Unmarshal(w.Body.Bytes(), list); err != nil || list.Kind != "MetricValueList" || list.APIVersion != "custom.metrics.k8s.io/v1beta2" {
			t.Fatalf("GET %s: %v %s", path, err, w.Body)
		}
		var out []string
		for _, v := range list.Items {
			out = append(out, fmt.Sprintf("%s/%s=%s", v.DescribedObject.Kind, v.DescribedObject.Name, v.Value.String()))
			if v.Metric.Name != path[strings.LastIndex(path, "/")+1:strings.IndexAny(path+"?", "?")] || v.Timestamp.IsZero() {
				t.Errorf("GET %s: %+v", path, v)
			}
		}
		return w.Code, out
	}
	for _, tc := range []struct {
		path string
		code int
		want string // the values, or a part of the error
	}{
		{"/namespaces/shop/pods/*/rps?labelSelector=app%3Dweb", http.StatusOK, "[Pod/web-1=12 Pod/web-3=1500m]"},
		{"/namespaces/shop/pods/*/rps", http.StatusOK, "[Pod/web-1=12 Pod/web-3=1500m]"},
		{"/namespaces/shop/pods/*/rps?metricLabelSelector=verb%3DGET", http.StatusOK, "[Pod/web-1=12 Pod/web-3=1500m]"},
		{"/namespaces/shop/pods/web-3/rps", http.StatusOK, "[Pod/web-3=1500m]"},
		{"/namespaces/shop/services/web/requests", http.StatusOK, "[Service/web=2k]"},
		{"/namespaces/shop/pods/web-2/rps", http.StatusNotFound, "the server could not find the metric rps for pods"},
		{"/namespaces/shop/pods/nope/rps", http.StatusNotFound, "the server could not find the metric rps for pods"},
		{"/namespaces/shop/pods/*/latency", http.StatusNotFound, "the server could not find the metric latency for pods"},
		{"/namespaces/shop/pods/*/rps?labelSelector=app%3Ddb", http.StatusNotFound, "could not find the metric rps"},
		{"/namespaces/other/pods/*/rps", http.StatusNotFound, "could not find the metric rps"},
		{"/namespaces/shop/pods/*/rps?labelSelector=app+in", http.StatusBadRequest, "labelSelector"},
		{"/namespaces/shop/pods/*/rps?metricLabelSelector=verb+in", http.StatusBadRequest, "metricLabelSelector"},
		{"/namespaces/shop/pods/*/rps?watch=true", http.StatusMethodNotAllowed, "watch"},
		{"/namespaces/shop/services/web/latency", http.StatusNotFound, "the server could not find the metric latency for services"},
		{"/namespaces/shop/services/web/errors", http.StatusNotFound, "could not find the metric errors"},
		{"/namespaces/shop/services/nope/requests", http.StatusNotFound, "could not find the metric requests for services"},
		{"/namespaces/shop/ingresses.networking.k8s.io/main/requests", http.StatusNotFound, "could not find the metric requests for ingresses.networking.k8s.io"},
		{"/services/web/requests", http.StatusNotFound, "not found"},
	} {
		code, got := values(tc.path)
		if code != tc.code || !strings.Contains(fmt.Sprint(got), tc.want) {
			t.Errorf("GET %s: %d %v; want %d %s", tc.path, code, got, tc.code, tc.want)
		}
	}

	// A value that is not one: no value, and a Warning Event on the pod
	// and on the Service.
	for _, obj := range []string{"neg", "web"} {
		events, err := kube.CoreV1().Events("shop").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range events.Items {
			found = found || (ev.InvolvedObject.Name == obj && ev.Reason == EventReason && ev.Type == corev1.EventTypeWarning &&
				strings.Contains(ev.Message, "annotation "+MetricAnnotationPrefix))
		}
		if obj == "neg" {
			if code, got := values("/namespaces/shop/pods/neg/rps"); code != http.StatusNotFound {
				t.Errorf("a negative value: %d %v; want NotFound", code, got)
			}
			continue
		}
		if !found {
			t.Errorf("no Warning Event on %s: %+v", obj, events.Items)
		}
	}
	events, _ := kube.CoreV1().Events("shop").List(ctx, metav1.ListOptions{})
	var negEvent bool
	for _, ev := range events.Items {
		negEvent = negEvent || (ev.InvolvedObject.Name == "neg" && strings.Contains(ev.Message, `"-3" is negative`))
	}
	if !negEvent {
		t.Errorf("no Warning Event on the pod with a negative value: %+v", events.Items)
	}

	// The override ConfigMap: over the annotations, for every pod of the
	// workload, and for an object whether it exists or not.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: OverrideConfigMap}, Data: map[string]string{
		OverridePodsMetricsKey:   "shop/web-1: {rps: 20}\nshop/db-1: {rps: \"7\", latency: 250m}",
		OverrideObjectMetricsKey: "shop/ingresses.networking.k8s.io/main: {requests: 500}\nshop/services/web: {requests: 1}",
	}}
	if _, err := kube.CoreV1().ConfigMaps(metav1.NamespaceSystem).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/namespaces/shop/pods/*/rps":                                "[Pod/db-1=7 Pod/web-1=20 Pod/web-3=1500m]",
		"/namespaces/shop/pods/*/latency":                            "[Pod/db-1=250m]",
		"/namespaces/shop/ingresses.networking.k8s.io/main/requests": "[/main=500]",
		"/namespaces/shop/services/web/requests":                     "[/web=1]",
	} {
		if code, got := values(path); code != http.StatusOK || fmt.Sprint(got) != want {
			t.Errorf("GET %s with overrides: %d %v; want %s", path, code, got, want)
		}
	}

	// Discovery lists the metrics the knobs give.
	var names []string
	for _, r := range discoveredMetrics(t, s) {
		names = append(names, r.Name)
		if r.Kind != "MetricValueList" || !r.Namespaced {
			t.Errorf("resource %+v", r)
		}
	}
	if want := "[ingresses.networking.k8s.io/requests pods/latency pods/rps services/requests]"; fmt.Sprint(names) != want {
		t.Errorf("discovery %v; want %s", names, want)
	}
	w := serve(s, proxied("/apis/custom.metrics.k8s.io", "front-proxy-client"))
	g := &metav1.APIGroup{}
	if err := json.Unmarshal(w.Body.Bytes(), g); err != nil || g.PreferredVersion.GroupVersion != "custom.metrics.k8s.io/v1beta2" {
		t.Fatalf("group: %d %v %s", w.Code, err, w.Body)
	}
}

// TestCustomDiscoveryRelists: discovery's metric names are collected at
// most once per customRelist (each collection lists every pod of the
// member); a new metric shows once that has passed, while its value is
// served at once.
func TestCustomDiscoveryRelists(t *testing.T) {
	web := testPod("web-9", "web", corev1.PodRunning, map[string]string{MetricAnnotationPrefix + "rps": "12"})
	s, kube := testServer(t, web)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	discovered := func() string {
		t.Helper()
		var names []string
		for _, r := range discoveredMetrics(t, s) {
			names = append(names, r.Name)
		}
		return fmt.Sprint(names)
	}
	lists := func() int {
		n := 0
		for _, a := range kube.Actions() {
			if a.GetVerb() == "list" && a.GetResource().Resource == "pods" {
				n++
			}
		}
		return n
	}
	if got := discovered(); got != "[pods/rps]" {
		t.Fatalf("discovery %s; want [pods/rps]", got)
	}
	db := testPod("db-9", "db", corev1.PodRunning, map[string]string{MetricAnnotationPrefix + "latency": "250m"})
	if _, err := kube.CoreV1().Pods("shop").Create(context.Background(), db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := lists()
	if w := serve(s, proxied(customPath+"/namespaces/shop/pods/db-9/latency", "front-proxy-client")); w.Code != http.StatusOK {
		t.Errorf("the new pod's latency before discovery lists it: %d %s; want it served at once", w.Code, w.Body)
	}
	for _, step := range []struct {
		advance time.Duration
		want    string
		listed  int // pod lists since the new pod
	}{
		{0, "[pods/rps]", 0},
		{customRelist - time.Second, "[pods/rps]", 0},
		{time.Second, "[pods/latency pods/rps]", 1},
		{time.Second, "[pods/latency pods/rps]", 1},
	} {
		now = now.Add(step.advance)
		if got := discovered(); got != step.want || lists()-before != step.listed {
			t.Errorf("at +%s: discovery %s after %d pod lists; want %s after %d", step.advance, got, lists()-before, step.want, step.listed)
		}
	}
}

// discoveredMetrics reads custom.metrics.k8s.io/v1beta2 discovery from s.
func discoveredMetrics(t *testing.T, s *Server) []metav1.APIResource {
	t.Helper()
	w := serve(s, proxied(customPath, "front-proxy-client"))
	res := &metav1.APIResourceList{}
	if err := json.Unmarshal(w.Body.Bytes(), res); err != nil {
		t.Fatalf("discovery: %d %v %s", w.Code, err, w.Body)
	}
	return res.APIResources
}
