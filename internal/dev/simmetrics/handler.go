package simmetrics

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// codecs encode the metrics types and the discovery and Status types as
// the client asks: JSON, YAML or protobuf.
var codecs = func() runtime.NegotiatedSerializer {
	scheme := runtime.NewScheme()
	if err := metricsv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := custommetricsv1beta2.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme).WithoutConversion()
}()

var gv = metricsv1beta1.SchemeGroupVersion

// openAPIV2 is an OpenAPI document without paths: the aggregator fetches
// one from every aggregated API and logs an error every minute for an
// API that has none.
var openAPIV2 = []byte(`{"swagger":"2.0","info":{"title":"shepherd simulated metrics","version":"v1beta1"},"paths":{}}`)

const gvPath = "/apis/" + metricsv1beta1.GroupName + "/v1beta1"

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	}
	mux.HandleFunc("GET /apis", s.trusted(func(w http.ResponseWriter, r *http.Request) {
		write(w, r, schema.GroupVersion{}, &metav1.APIGroupList{Groups: []metav1.APIGroup{apiGroup(), customAPIGroup()}})
	}))
	s.customRoutes(mux)
	mux.HandleFunc("GET /apis/"+metricsv1beta1.GroupName, s.trusted(func(w http.ResponseWriter, r *http.Request) {
		g := apiGroup()
		write(w, r, schema.GroupVersion{}, &g)
	}))
	mux.HandleFunc("GET "+gvPath, s.trusted(func(w http.ResponseWriter, r *http.Request) {
		write(w, r, schema.GroupVersion{}, apiResources())
	}))
	mux.HandleFunc("GET /openapi/v2", s.trusted(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPIV2)
	}))
	mux.HandleFunc("GET "+gvPath+"/pods", s.trusted(s.listPods))
	mux.HandleFunc("GET "+gvPath+"/namespaces/{namespace}/pods", s.trusted(s.listPods))
	mux.HandleFunc("GET "+gvPath+"/namespaces/{namespace}/pods/{name}", s.trusted(s.getPod))
	mux.HandleFunc("GET "+gvPath+"/nodes", s.trusted(s.listNodes))
	mux.HandleFunc("GET "+gvPath+"/nodes/{name}", s.trusted(s.getNode))
	mux.HandleFunc("/", s.trusted(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			fail(w, r, apierrors.NewMethodNotSupported(metricsv1beta1.Resource(""), r.Method))
			return
		}
		fail(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	}))
	return mux
}

// trusted serves only requests proxied by the member's aggregator, i.e.
// with a client certificate of the front-proxy CA and an allowed name.
// The aggregator has authenticated and authorized the user already.
func (s *Server) trusted(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.trust.verified(r.TLS) {
			fail(w, r, apierrors.NewUnauthorized("the metrics API is served through the member's API server: request /apis/metrics.k8s.io/v1beta1 there"))
			return
		}
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			fail(w, r, apierrors.NewMethodNotSupported(metricsv1beta1.Resource("pods"), "watch"))
			return
		}
		next(w, r)
	}
}

func (t frontProxy) verified(state *tls.ConnectionState) bool {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return false
	}
	return len(t.allowed) == 0 || slices.Contains(t.allowed, state.VerifiedChains[0][0].Subject.CommonName)
}

func apiGroup() metav1.APIGroup {
	v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
	return metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}
}

func apiResources() *metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list"}
	return &metav1.APIResourceList{
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{
			{Name: "nodes", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
			{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
		},
	}
}

func write(w http.ResponseWriter, r *http.Request, version schema.GroupVersion, obj runtime.Object) {
	responsewriters.WriteObjectNegotiated(codecs, negotiation.DefaultEndpointRestrictions, version, w, r, http.StatusOK, obj, false)
}

func fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, codecs, gv, w, r)
}

// listOptions passes the request's label and field selectors on to the
// member's API server, which checks the field selector; a label selector
// that does not parse is the client's error.
func listOptions(r *http.Request) (metav1.ListOptions, error) {
	q := r.URL.Query()
	opts := metav1.ListOptions{LabelSelector: q.Get("labelSelector"), FieldSelector: q.Get("fieldSelector")}
	if _, err := labels.Parse(opts.LabelSelector); err != nil {
		return opts, apierrors.NewBadRequest("labelSelector " + err.Error())
	}
	return opts, nil
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	opts, err := listOptions(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	pods, err := s.kube.CoreV1().Pods(r.PathValue("namespace")).List(ctx, opts)
	if err != nil {
		fail(w, r, err)
		return
	}
	items, err := s.podMetrics(ctx, pods.Items)
	if err != nil {
		fail(w, r, err)
		return
	}
	write(w, r, gv, &metricsv1beta1.PodMetricsList{Items: items})
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	name := r.PathValue("name")
	notFound := apierrors.NewNotFound(metricsv1beta1.Resource("pods"), name)
	pod, err := s.kube.CoreV1().Pods(r.PathValue("namespace")).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fail(w, r, notFound)
		return
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	items, err := s.podMetrics(ctx, []corev1.Pod{*pod})
	if err != nil {
		fail(w, r, err)
		return
	}
	if len(items) == 0 {
		fail(w, r, notFound)
		return
	}
	write(w, r, gv, &items[0])
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	opts, err := listOptions(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, opts)
	if err != nil {
		fail(w, r, err)
		return
	}
	items, err := s.nodeMetrics(ctx, nodes.Items, "")
	if err != nil {
		fail(w, r, err)
		return
	}
	write(w, r, gv, &metricsv1beta1.NodeMetricsList{Items: items})
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	name := r.PathValue("name")
	node, err := s.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fail(w, r, apierrors.NewNotFound(metricsv1beta1.Resource("nodes"), name))
		return
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	items, err := s.nodeMetrics(ctx, []corev1.Node{*node}, name)
	if err != nil {
		fail(w, r, err)
		return
	}
	write(w, r, gv, &items[0])
}

// podMetrics is the metrics of those of pods that report, sorted by
// namespace and name, with each pod's knob resolved against the override
// ConfigMap read now.
func (s *Server) podMetrics(ctx context.Context, pods []corev1.Pod) ([]metricsv1beta1.PodMetrics, error) {
	overrides, err := s.overrides(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	now := s.now().Truncate(time.Second)
	items := make([]metricsv1beta1.PodMetrics, 0, len(pods))
	for i := range pods {
		pod := &pods[i]
		if !Reporting(pod) {
			continue
		}
		k := KnobFor(pod, overrides)
		if len(k.Problems) > 0 {
			s.reporter.pod(ctx, pod, k.Problems)
		}
		items = append(items, PodMetrics(pod, k, now))
	}
	return items, nil
}

// nodeMetrics sums the reporting pods on nodes: on node only, if given.
func (s *Server) nodeMetrics(ctx context.Context, nodes []corev1.Node, node string) ([]metricsv1beta1.NodeMetrics, error) {
	sel := fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning))
	if node != "" {
		sel = fields.AndSelectors(sel, fields.OneTermEqualSelector("spec.nodeName", node))
	}
	pods, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	podNode := make(map[string]string, len(pods.Items))
	for i := range pods.Items {
		podNode[pods.Items[i].Namespace+"/"+pods.Items[i].Name] = pods.Items[i].Spec.NodeName
	}
	pms, err := s.podMetrics(ctx, pods.Items)
	if err != nil {
		return nil, err
	}
	return NodeMetrics(nodes, pms, podNode, s.now().Truncate(time.Second)), nil
}

// overrides reads the member's override ConfigMap; there being none is
// no override.
func (s *Server) overrides(ctx context.Context) (Overrides, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, OverrideConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Overrides{}, nil
	}
	if err != nil {
		return Overrides{}, err
	}
	o, problems := ParseOverrides(cm.Data)
	if len(problems) > 0 {
		s.reporter.configMap(ctx, cm, problems)
	}
	return o, nil
}
