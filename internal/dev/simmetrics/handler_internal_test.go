package simmetrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// testPod is a pod of namespace shop, Ready on node n1 unless phase says
// otherwise, with one container requesting 200m and 100Mi.
func testPod(name, app string, phase corev1.PodPhase, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": app}, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{
			Name: "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("100Mi"),
			}},
		}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	if phase == corev1.PodRunning {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	return p
}

func testServer(t *testing.T, objects ...runtime.Object) (*Server, *fake.Clientset) {
	kube := fake.NewClientset(append([]runtime.Object{
		testPod("web-1", "web", corev1.PodRunning, map[string]string{CPUUtilizationAnnotation: "90"}),
		testPod("web-2", "web", corev1.PodPending, nil),
		testPod("db-1", "db", corev1.PodRunning, map[string]string{CPUUtilizationAnnotation: "2000"}),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
	}, objects...)...)
	now := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	service := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-svc",
			Annotations: map[string]string{MetricAnnotationPrefix + "requests": "2k", MetricAnnotationPrefix + "errors": "many"}}}
	return &Server{
		log:      logr.Discard(),
		kube:     kube,
		now:      func() time.Time { return now },
		trust:    frontProxy{allowed: []string{"front-proxy-client"}},
		reporter: newReporter(kube, logr.Discard()),
		mapper:   fixedMapper{mapper},
		meta:     metadatafake.NewSimpleMetadataClient(scheme, service),
	}, kube
}

// fixedMapper is a mapper with nothing to rediscover.
type fixedMapper struct{ meta.RESTMapper }

func (fixedMapper) Reset() {}

// proxied is a request as the aggregator sends it: over TLS with its
// front-proxy client certificate (named name).
func proxied(path, name string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: name}}}}}
	return r
}

func serve(s *Server, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.handler().ServeHTTP(w, r)
	return w
}

func TestHandlerServesOnlyTheAggregator(t *testing.T) {
	s, _ := testServer(t)
	for name, r := range map[string]*http.Request{
		"no TLS":            httptest.NewRequest(http.MethodGet, gvPath+"/pods", nil),
		"no certificate":    func() *http.Request { r := proxied(gvPath+"/pods", ""); r.TLS.VerifiedChains = nil; return r }(),
		"another cert name": proxied(gvPath+"/pods", "shepherd-admin"),
	} {
		if w := serve(s, r); w.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s; want 401", name, w.Code, w.Body)
		}
	}
	if w := serve(s, httptest.NewRequest(http.MethodGet, "/healthz", nil)); w.Code != http.StatusOK {
		t.Errorf("/healthz without a certificate: %d; want 200", w.Code)
	}
}

func TestHandlerPodMetrics(t *testing.T) {
	s, kube := testServer(t)
	w := serve(s, proxied(gvPath+"/namespaces/shop/pods", "front-proxy-client"))
	list := &metricsv1beta1.PodMetricsList{}
	if err := json.Unmarshal(w.Body.Bytes(), list); w.Code != http.StatusOK || err != nil {
		t.Fatalf("list: %d %v %s", w.Code, err, w.Body)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "db-1" || list.Items[1].Name != "web-1" {
		t.Fatalf("list: %v; want db-1 and web-1 (sorted; the pending web-2 left out)", list.Items)
	}
	for _, tc := range []struct {
		pm  metricsv1beta1.PodMetrics
		cpu string
	}{{list.Items[0], "20m"}, {list.Items[1], "180m"}} {
		cpu := tc.pm.Containers[0].Usage[corev1.ResourceCPU]
		if cpu.Cmp(resource.MustParse(tc.cpu)) != 0 {
			t.Errorf("%s: cpu %s, want %s", tc.pm.Name, cpu.String(), tc.cpu)
		}
		if want := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC); !tc.pm.Timestamp.Time.Equal(want) || tc.pm.Window.Duration != Window {
			t.Errorf("%s: timestamp %s window %s", tc.pm.Name, tc.pm.Timestamp, tc.pm.Window.Duration)
		}
	}

	w = serve(s, proxied(gvPath+"/namespaces/shop/pods?labelSelector=app%3Dweb", "front-proxy-client"))
	list = &metricsv1beta1.PodMetricsList{}
	if err := json.Unmarshal(w.Body.Bytes(), list); err != nil || len(list.Items) != 1 || list.Items[0].Name != "web-1" {
		t.Errorf("app=web: %d %s; want web-1 only", w.Code, w.Body)
	}
	for path, code := range map[string]int{
		gvPath + "/namespaces/shop/pods/web-1":              http.StatusOK,
		gvPath + "/namespaces/shop/pods/web-2":              http.StatusNotFound,
		gvPath + "/namespaces/shop/pods/nope":               http.StatusNotFound,
		gvPath + "/namespaces/shop/pods?watch=true":         http.StatusMethodNotAllowed,
		gvPath + "/namespaces/shop/pods?labelSelector=a+in": http.StatusBadRequest,
		gvPath + "/pods":        http.StatusOK,
		gvPath + "/nodes/n1":    http.StatusOK,
		gvPath + "/nodes/n2":    http.StatusNotFound,
		gvPath + "/deployments": http.StatusNotFound,
		"/apis":                 http.StatusOK,
		"/openapi/v2":           http.StatusOK,
	} {
		if w := serve(s, proxied(path, "front-proxy-client")); w.Code != code {
			t.Errorf("GET %s: %d %s; want %d", path, w.Code, w.Body, code)
		}
	}

	// db-1's knob is out of range: one Warning Event, however often read.
	events, err := kube.CoreV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(events.Items) != 1 {
		t.Fatalf("events: %v, %v; want one", events, err)
	}
	if ev := events.Items[0]; ev.InvolvedObject.Name != "db-1" || ev.Reason != EventReason || ev.Type != corev1.EventTypeWarning {
		t.Errorf("event %+v; want a Warning %s on db-1", ev, EventReason)
	}
}

func TestHandlerDiscovery(t *testing.T) {
	s, _ := testServer(t)
	w := serve(s, proxied("/apis", "front-proxy-client"))
	groups := &metav1.APIGroupList{}
	if err := json.Unmarshal(w.Body.Bytes(), groups); err != nil || len(groups.Groups) != 2 || groups.Groups[0].Name != "metrics.k8s.io" || groups.Groups[1].Name != "custom.metrics.k8s.io" {
		t.Fatalf("groups: %d %v %s", w.Code, err, w.Body)
	}
	w = serve(s, proxied(gvPath, "front-proxy-client"))
	res := &metav1.APIResourceList{}
	if err := json.Unmarshal(w.Body.Bytes(), res); err != nil || res.GroupVersion != "metrics.k8s.io/v1beta1" || len(res.APIResources) != 2 {
		t.Fatalf("discovery: %d %v %s", w.Code, err, w.Body)
	}
	w = serve(s, proxied("/apis/metrics.k8s.io", "front-proxy-client"))
	g := &metav1.APIGroup{}
	if err := json.Unmarshal(w.Body.Bytes(), g); err != nil || g.PreferredVersion.GroupVersion != "metrics.k8s.io/v1beta1" {
		t.Fatalf("group: %d %v %s", w.Code, err, w.Body)
	}
}
