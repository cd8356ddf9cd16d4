package federatedhpa

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// reading is what the controller read in one member for the target.
type reading struct {
	pods []corev1.Pod
	// podMetrics are the pods' metrics.k8s.io PodMetrics (read when a
	// Resource or ContainerResource metric needs them); podMetricsErr
	// says why they could not be read.
	podMetrics    []metricsv1beta1.PodMetrics
	podMetricsErr error
	// custom holds per metric of the spec the custom.metrics.k8s.io
	// values of a Pods metric (one per pod) or an Object metric (one);
	// customErr says why they could not be read.
	custom    [][]custommetricsv1beta2.MetricValue
	customErr []error
}

// samples turns what was read in a member into decide's cluster (all but
// its name): its pods with each metric's values, the Object metrics'
// values, and per metric why the member is left out of it, if it is:
// the metric could not be read, it has no values for the member's running
// and ready pods (or no value, for an Object metric), or the newest is
// older than maxAge. A member whose pods are all still starting
// (Pending, or running and not Ready: no metrics API reports those) is
// measured: its pods are unready, idle on a scale-up, not counted at the
// others' average as a left-out member's would be.
func samples(metrics []autoscalingv2.MetricSpec, in reading, now time.Time, maxAge time.Duration) cluster {
	n := len(metrics)
	c := cluster{leftOut: make([]string, n), object: make([]int64, n), hasObject: make([]bool, n)}
	byName := make(map[string]*metricsv1beta1.PodMetrics, len(in.podMetrics))
	var newest time.Time
	for i := range in.podMetrics {
		byName[in.podMetrics[i].Name] = &in.podMetrics[i]
		if in.podMetrics[i].Timestamp.After(newest) {
			newest = in.podMetrics[i].Timestamp.Time
		}
	}
	// Each Pods metric's values by pod, in milli-units.
	perPod := make([]map[string]int64, n)
	for i, m := range metrics {
		if m.Type == autoscalingv2.PodsMetricSourceType && i < len(in.custom) {
			perPod[i] = make(map[string]int64, len(in.custom[i]))
			for _, v := range in.custom[i] {
				perPod[i][v.DescribedObject.Name] = v.Value.MilliValue()
			}
		}
	}
	live := 0
	for i := range in.pods {
		k8sPod := &in.pods[i]
		q := pod{name: k8sPod.Name,
			ignored:  k8sPod.DeletionTimestamp != nil || k8sPod.Status.Phase == corev1.PodFailed,
			pending:  k8sPod.Status.Phase == corev1.PodPending,
			notReady: !reporting(k8sPod)}
		if !q.ignored && !q.notReady {
			live++
		}
		pm := byName[k8sPod.Name]
		if pm != nil {
			q.unreadyCPU = cpuUnready(k8sPod, pm.Timestamp.Time, pm.Window.Duration, now)
		}
		for j, m := range metrics {
			var req, use int64
			var has bool
			reqErr := ""
			if perPod[j] != nil {
				use, has = perPod[j][k8sPod.Name]
			} else {
				req, use, has, reqErr = podValues(m, k8sPod, pm)
			}
			q.request, q.usage, q.hasUsage, q.requestErr = append(q.request, req), append(q.usage, use), append(q.hasUsage, has), append(q.requestErr, reqErr)
		}
		c.pods = append(c.pods, q)
	}
	resources := ""
	switch {
	case in.podMetricsErr != nil:
		resources = "metrics not readable: " + in.podMetricsErr.Error()
	case live > 0 && len(in.podMetrics) == 0:
		resources = "no metrics.k8s.io samples for its running pods"
	case live > 0 && now.Sub(newest) > maxAge:
		resources = fmt.Sprintf("metrics stale: the newest sample is %s old", now.Sub(newest).Round(time.Second))
	}
	for i, m := range metrics {
		switch m.Type {
		case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
			c.leftOut[i] = resources
		case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType:
			req, err := customRequest(m)
			if err != nil {
				continue // the metric itself is wrong: decide says so, naming no member
			}
			var values []custommetricsv1beta2.MetricValue
			var readErr error
			if i < len(in.custom) {
				values, readErr = in.custom[i], in.customErr[i]
			}
			c.leftOut[i] = customLeftOut(req, values, readErr, live, now, maxAge)
			if req.Object != nil && c.leftOut[i] == "" {
				c.object[i], c.hasObject[i] = values[0].Value.MilliValue(), true
			}
		}
	}
	return c
}

// customLeftOut says why a member is left out of a Pods or Object
// metric, req, whose values it read (values, or readErr): the metric
// could not be read (unless it is a Pods metric the API does not know
// while no pod runs ready: nothing to measure yet), it has no values for
// the running and ready pods, or no value for the object, or the newest
// is older than maxAge.
func customLeftOut(req workv1alpha1.CustomMetricRequest, values []custommetricsv1beta2.MetricValue, readErr error, live int, now time.Time, maxAge time.Duration) string {
	pods := req.Object == nil
	switch {
	case readErr != nil && pods && live == 0 && apierrors.IsNotFound(readErr):
		return ""
	case readErr != nil:
		return fmt.Sprintf("%s not readable: %s", req, exclusion(readErr, ""))
	case pods && live > 0 && len(values) == 0:
		return fmt.Sprintf("no values of %s for its running pods", req)
	case !pods && len(values) == 0:
		return fmt.Sprintf("no value of %s", req)
	}
	var newest time.Time
	for _, v := range values {
		if v.Timestamp.After(newest) {
			newest = v.Timestamp.Time
		}
	}
	if (!pods || live > 0) && !newest.IsZero() && now.Sub(newest) > maxAge {
		return fmt.Sprintf("%s stale: the newest value is %s old", req, now.Sub(newest).Round(time.Second))
	}
	return ""
}

// customRequest is what a Pods or Object metric asks of a member's
// custom.metrics.k8s.io; an error when it names no metric or no whole
// object, or its selector is not one.
func customRequest(m autoscalingv2.MetricSpec) (workv1alpha1.CustomMetricRequest, error) {
	var id autoscalingv2.MetricIdentifier
	var req workv1alpha1.CustomMetricRequest
	switch {
	case m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil:
		id = m.Pods.Metric
	case m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil:
		id = m.Object.Metric
		o := m.Object.DescribedObject
		req.Object = &workv1alpha1.CustomMetricObject{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name}
	default:
		return req, fmt.Errorf("a %s metric without its source", m.Type)
	}
	req.Name = id.Name
	switch {
	case id.Name == "":
		return req, fmt.Errorf("a %s metric without a metric name", m.Type)
	case req.Object != nil && (req.Object.APIVersion == "" || req.Object.Kind == "" || req.Object.Name == ""):
		return req, fmt.Errorf("%s: describedObject needs an apiVersion, a kind and a name", req)
	}
	if id.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(id.Selector)
		if err != nil {
			return req, fmt.Errorf("%s: metric.selector: %v", req, err)
		}
		req.Selector = sel.String()
	}
	return req, nil
}

// customRequests are the custom.metrics.k8s.io metrics of metrics: those
// of its Pods and Object metrics whose selectors parse, once each, in
// the spec's order.
func customRequests(metrics []autoscalingv2.MetricSpec) []workv1alpha1.CustomMetricRequest {
	var out []workv1alpha1.CustomMetricRequest
	for _, m := range metrics {
		if m.Type != autoscalingv2.PodsMetricSourceType && m.Type != autoscalingv2.ObjectMetricSourceType {
			continue
		}
		req, err := customRequest(m)
		if err != nil || slices.ContainsFunc(out, func(r workv1alpha1.CustomMetricRequest) bool {
			return r.Name == req.Name && r.Selector == req.Selector && sameObject(r.Object, req.Object)
		}) {
			continue
		}
		out = append(out, req)
	}
	return out
}

func sameObject(a, b *workv1alpha1.CustomMetricObject) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// needsPodMetrics says whether metrics read metrics.k8s.io: some are
// Resource or ContainerResource metrics.
func needsPodMetrics(metrics []autoscalingv2.MetricSpec) bool {
	return slices.ContainsFunc(metrics, func(m autoscalingv2.MetricSpec) bool {
		return m.Type == autoscalingv2.ResourceMetricSourceType || m.Type == autoscalingv2.ContainerResourceMetricSourceType
	})
}

// reporting says whether a metrics API has samples of pod to give: it
// runs and is Ready.
func reporting(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podValues are a pod's request and usage for one resource metric, in
// milli-units, whether a sample was read, and why the request cannot be
// summed.
func podValues(m autoscalingv2.MetricSpec, p *corev1.Pod, pm *metricsv1beta1.PodMetrics) (int64, int64, bool, string) {
	var res corev1.ResourceName
	container := ""
	switch {
	case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil:
		res = m.Resource.Name
	case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil:
		res, container = m.ContainerResource.Name, m.ContainerResource.Container
	default:
		return 0, 0, false, ""
	}
	var req int64
	reqErr := ""
	for _, c := range p.Spec.Containers {
		if container != "" && c.Name != container {
			continue
		}
		q, ok := c.Resources.Requests[res]
		if !ok && reqErr == "" {
			reqErr = fmt.Sprintf("container %s of pod %s has no %s request", c.Name, p.Name, res)
		}
		req += q.MilliValue()
	}
	if pm == nil {
		return req, 0, false, reqErr
	}
	var use int64
	found := false
	for _, c := range pm.Containers {
		if container != "" && c.Name != container {
			continue
		}
		if q, ok := c.Usage[res]; ok {
			use += q.MilliValue()
			found = true
		}
	}
	return req, use, found, reqErr
}

// setCondition sets c in st, keeping its transition time when its status
// did not change.
func setCondition(st *autoscalingv1alpha1.FederatedHPAStatus, c condition, now time.Time) {
	for i := range st.Conditions {
		cur := &st.Conditions[i]
		if cur.Type != c.kind {
			continue
		}
		if cur.Status != c.status {
			cur.LastTransitionTime = metav1.Time{Time: now}
		}
		cur.Status, cur.Reason, cur.Message = c.status, c.reason, c.message
		return
	}
	st.Conditions = append(st.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: c.kind, Status: c.status, Reason: c.reason, Message: c.message,
		LastTransitionTime: metav1.Time{Time: now}})
}

func findCondition(cs []condition, kind autoscalingv2.HorizontalPodAutoscalerConditionType) *condition {
	for i := range cs {
		if cs[i].kind == kind {
			return &cs[i]
		}
	}
	return nil
}

// runtimeConvert decodes an unstructured value into out through JSON.
func runtimeConvert(in map[string]any, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
