package federatedhpa

import (
	"encoding/json"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// samples turns a member's pods and PodMetrics into decide's pods, and
// says why the member is left out when it is: its metrics could not be
// read, it has none for its running and ready pods, or the newest is
// older than maxAge. A member whose pods are all still starting (Pending,
// or running and not Ready: no metrics API reports those) is measured:
// its pods are unready, idle on a scale-up, not counted at the others'
// average as a left-out member's would be.
func samples(metrics []autoscalingv2.MetricSpec, pods []corev1.Pod, pms []metricsv1beta1.PodMetrics, readErr error, now time.Time, maxAge time.Duration) ([]pod, string) {
	byName := make(map[string]*metricsv1beta1.PodMetrics, len(pms))
	var newest time.Time
	for i := range pms {
		byName[pms[i].Name] = &pms[i]
		if pms[i].Timestamp.After(newest) {
			newest = pms[i].Timestamp.Time
		}
	}
	out := make([]pod, 0, len(pods))
	live := 0
	for i := range pods {
		k8sPod := &pods[i]
		q := pod{name: k8sPod.Name,
			ignored: k8sPod.DeletionTimestamp != nil || k8sPod.Status.Phase == corev1.PodFailed,
			pending: k8sPod.Status.Phase == corev1.PodPending}
		if !q.ignored && reporting(k8sPod) {
			live++
		}
		pm := byName[k8sPod.Name]
		if pm != nil {
			q.unreadyCPU = cpuUnready(k8sPod, pm.Timestamp.Time, pm.Window.Duration, now)
		}
		for _, m := range metrics {
			req, use, has, reqErr := podValues(m, k8sPod, pm)
			q.request, q.usage, q.hasUsage, q.requestErr = append(q.request, req), append(q.usage, use), append(q.hasUsage, has), append(q.requestErr, reqErr)
		}
		out = append(out, q)
	}
	switch {
	case readErr != nil:
		return out, "metrics not readable: " + readErr.Error()
	case live > 0 && len(pms) == 0:
		return out, "no metrics.k8s.io samples for its running pods"
	case live > 0 && now.Sub(newest) > maxAge:
		return out, fmt.Sprintf("metrics stale: the newest sample is %s old", now.Sub(newest).Round(time.Second))
	}
	return out, ""
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

// podValues are a pod's request and usage for one metric, in
// milli-units, whether a sample was read, and why the request cannot be
// summed. Only resource metrics are read from members.
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
