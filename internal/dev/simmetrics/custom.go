package simmetrics

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
)

var customGV = custommetricsv1beta2.SchemeGroupVersion

const customPath = "/apis/" + custommetricsv1beta2.GroupName + "/v1beta2"

// metricNotFound is the custom metrics API's answer for a metric it has
// no value of, as metrics adapters give it.
func metricNotFound(gr schema.GroupResource, metric string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: metric},
		Message: fmt.Sprintf("the server could not find the metric %s for %s", metric, gr.String())}}
}

// customRoutes adds custom.metrics.k8s.io/v1beta2 to mux: discovery, the
// values of Pods metrics (of one pod, or of the pods a label selector
// selects, name "*") and of Object metrics of namespaced objects.
func (s *Server) customRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /apis/"+custommetricsv1beta2.GroupName, s.trusted(func(w http.ResponseWriter, r *http.Request) {
		g := customAPIGroup()
		write(w, r, schema.GroupVersion{}, &g)
	}))
	mux.HandleFunc("GET "+customPath, s.trusted(s.customResources))
	mux.HandleFunc("GET "+customPath+"/namespaces/{namespace}/pods/{name}/{metric}", s.trusted(s.podsMetric))
	mux.HandleFunc("GET "+customPath+"/namespaces/{namespace}/{resource}/{name}/{metric}", s.trusted(s.objectMetric))
}

func customAPIGroup() metav1.APIGroup {
	v := metav1.GroupVersionForDiscovery{GroupVersion: customGV.String(), Version: customGV.Version}
	return metav1.APIGroup{Name: customGV.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}
}

// customRelist is how long the metric names listed in discovery are
// served before they are collected again. Collecting lists every pod of
// the member and reads the override ConfigMap, and discovery is asked
// for often: the aggregator's availability and discovery checks, and
// every client that discovers all groups (the garbage collector every
// 30 s, the hub's member clients). Metrics adapters do the same:
// prometheus-adapter relists its series every --metrics-relist-interval.
// A metric's value is read on every request; only its appearing in
// discovery may lag by this much.
const customRelist = 10 * time.Second

// metricNames is the metric names last collected for discovery, and
// when.
type metricNames struct {
	mu        sync.Mutex
	collected time.Time
	resources []metav1.APIResource
}

// customResources lists the metrics the knobs give values of: "pods/NAME"
// for those of pods' annotations and the override ConfigMap's Pods
// metrics, "RESOURCE/NAME" for its Object metrics (objects' own
// annotations are served, not listed), as last collected (customRelist).
func (s *Server) customResources(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	resources, err := s.metricNames(ctx)
	if err != nil {
		fail(w, r, err)
		return
	}
	write(w, r, schema.GroupVersion{}, &metav1.APIResourceList{GroupVersion: customGV.String(), APIResources: resources})
}

// metricNames returns the discovery list, collecting it again when the
// last one is older than customRelist. Callers must not modify it.
func (s *Server) metricNames(ctx context.Context) ([]metav1.APIResource, error) {
	s.names.mu.Lock()
	defer s.names.mu.Unlock()
	now := s.now()
	if s.names.resources != nil && now.Sub(s.names.collected) < customRelist {
		return s.names.resources, nil
	}
	resources, err := s.collectMetricNames(ctx)
	if err != nil {
		return nil, err
	}
	s.names.collected, s.names.resources = now, resources
	return resources, nil
}

// collectMetricNames lists the metric names the pods' annotations and the
// override ConfigMap give, sorted.
func (s *Server) collectMetricNames(ctx context.Context) ([]metav1.APIResource, error) {
	overrides, err := s.overrides(ctx)
	if err != nil {
		return nil, err
	}
	pods, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for i := range pods.Items {
		var ignored []string
		for m := range metricValues(pods.Items[i].Annotations, nil, &ignored) {
			names["pods/"+m] = true
		}
	}
	for _, ms := range overrides.PodsMetrics {
		for m := range ms {
			names["pods/"+m] = true
		}
	}
	for key, ms := range overrides.ObjectMetrics {
		resource := strings.Split(key, "/")[1] // NAMESPACE/RESOURCE/NAME, as parsed
		for m := range ms {
			names[resource+"/"+m] = true
		}
	}
	resources := []metav1.APIResource{}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		resources = append(resources, metav1.APIResource{Name: n, Namespaced: true, Kind: "MetricValueList", Verbs: metav1.Verbs{"get"}})
	}
	return resources, nil
}

// metricSelector checks the request's metricLabelSelector. Simulated
// values carry no labels, so a selector that parses selects them all.
func metricSelector(r *http.Request) error {
	if _, err := labels.Parse(r.URL.Query().Get("metricLabelSelector")); err != nil {
		return apierrors.NewBadRequest("metricLabelSelector " + err.Error())
	}
	return nil
}

// podsMetric serves a Pods metric: the values of the reporting pods (Running
// and Ready) of the namespace that have one, those the label selector
// selects for name "*", else the named pod's; NotFound when none has one.
func (s *Server) podsMetric(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	ns, name, metric := r.PathValue("namespace"), r.PathValue("name"), r.PathValue("metric")
	notFound := metricNotFound(schema.GroupResource{Resource: "pods"}, metric)
	if err := metricSelector(r); err != nil {
		fail(w, r, err)
		return
	}
	var pods []corev1.Pod
	if name == custommetricsv1beta2.AllObjects {
		opts, err := listOptions(r)
		if err != nil {
			fail(w, r, err)
			return
		}
		list, err := s.kube.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			fail(w, r, err)
			return
		}
		pods = list.Items
	} else {
		pod, err := s.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			fail(w, r, notFound)
			return
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		pods = []corev1.Pod{*pod}
	}
	overrides, err := s.overrides(ctx)
	if err != nil {
		fail(w, r, err)
		return
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	now := metav1.NewTime(s.now().Truncate(time.Second))
	list := &custommetricsv1beta2.MetricValueList{Items: []custommetricsv1beta2.MetricValue{}}
	for i := range pods {
		pod := &pods[i]
		if !Reporting(pod) {
			continue
		}
		values, problems := PodMetricValues(pod, overrides)
		if len(problems) > 0 {
			s.reporter.pod(ctx, pod, problems)
		}
		if v, ok := values[metric]; ok {
			list.Items = append(list.Items, custommetricsv1beta2.MetricValue{
				DescribedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pod.Name},
				Metric:          custommetricsv1beta2.MetricIdentifier{Name: metric}, Timestamp: now, Value: v})
		}
	}
	if len(list.Items) == 0 {
		fail(w, r, notFound)
		return
	}
	write(w, r, customGV, list)
}

// objectMetric serves an Object metric of a namespaced object: the value
// the override ConfigMap gives it, else its annotation's; NotFound when
// neither does, or the object is not there.
func (s *Server) objectMetric(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	ns, resource, name, metric := r.PathValue("namespace"), r.PathValue("resource"), r.PathValue("name"), r.PathValue("metric")
	gr := schema.ParseGroupResource(resource)
	notFound := metricNotFound(gr, metric)
	if err := metricSelector(r); err != nil {
		fail(w, r, err)
		return
	}
	overrides, err := s.overrides(ctx)
	if err != nil {
		fail(w, r, err)
		return
	}
	key := ns + "/" + resource + "/" + name
	ref := corev1.ObjectReference{Namespace: ns, Name: name}
	var annotations map[string]string
	if _, overridden := overrides.ObjectMetrics[key][metric]; !overridden {
		obj, gvk, err := s.object(ctx, gr, ns, name)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			fail(w, r, notFound)
			return
		case err != nil:
			fail(w, r, err)
			return
		}
		annotations = obj.GetAnnotations()
		ref = corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Name: name, UID: obj.GetUID()}
	}
	values, problems := ObjectMetricValues(annotations, key, overrides)
	if len(problems) > 0 {
		s.reporter.object(ctx, ref, problems)
	}
	v, ok := values[metric]
	if !ok {
		fail(w, r, notFound)
		return
	}
	write(w, r, customGV, &custommetricsv1beta2.MetricValueList{Items: []custommetricsv1beta2.MetricValue{{
		DescribedObject: ref, Metric: custommetricsv1beta2.MetricIdentifier{Name: metric},
		Timestamp: metav1.NewTime(s.now().Truncate(time.Second)), Value: v}}})
}

// object reads the metadata of the object of resource gr in namespace,
// and its kind; a NoMatch error for a resource the member does not
// serve.
func (s *Server) object(ctx context.Context, gr schema.GroupResource, namespace, name string) (metav1.Object, schema.GroupVersionKind, error) {
	gvr, err := s.mapper.ResourceFor(gr.WithVersion(""))
	if meta.IsNoMatchError(err) {
		// A kind installed since the mapper's discovery.
		s.mapper.Reset()
		gvr, err = s.mapper.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	gvk, err := s.mapper.KindFor(gvr)
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	obj, err := s.meta.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, gvk, err
	}
	return obj, gvk, nil
}
