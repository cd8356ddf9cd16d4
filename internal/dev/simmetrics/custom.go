package simmetrics

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
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

// customResources lists the metrics the knobs give values of: "pods/NAME"
// for those of pods' annotations and the override ConfigMap's Pods
// metrics, "RESOURCE/NAME" for its Object metrics (objects' own
// annotations are served, not listed).
func (s *Server) customResources(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	overrides, err := s.overrides(ctx)
	if err != nil {
		fail(w, r, err)
		return
	}
	pods, err := s.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		fail(w, r, err)
		return
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
	list := &metav1.APIResourceList{GroupVersion: customGV.String(), APIResources: []metav1.APIResource{}}
	for n := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: n, Namespaced: true, Kind: "MetricValueList", Verbs: metav1.Verbs{"get"}})
	}
	sort.Slice(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
	write(w, r, schema.GroupVersion{}, list)
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
