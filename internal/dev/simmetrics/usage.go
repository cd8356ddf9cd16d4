package simmetrics

import (
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// Window is the span each reported usage is averaged over, as
// metrics-server's default resolution: Timestamp is its end.
const Window = 15 * time.Second

// Reporting reports whether a pod has metrics: it runs and is Ready. A
// pending, starting, unready or finished pod has none, as a kubelet would
// report none for it.
func Reporting(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ContainerUsage is each running container's usage at the knob's
// percents: CPU request × CPU percent (in millicores, rounded) and memory
// request × memory percent (in bytes, rounded). A container without a
// request uses its limit; without either it uses nothing of that
// resource. Sidecars (init containers that keep running) count; other
// init containers do not.
func ContainerUsage(pod *corev1.Pod, k Knob) []metricsv1beta1.ContainerMetrics {
	var out []metricsv1beta1.ContainerMetrics
	add := func(c *corev1.Container) {
		out = append(out, metricsv1beta1.ContainerMetrics{
			Name: c.Name,
			Usage: corev1.ResourceList{
				corev1.ResourceCPU:    cpuUsage(request(c, corev1.ResourceCPU), k.CPU),
				corev1.ResourceMemory: memoryUsage(request(c, corev1.ResourceMemory), k.Memory),
			},
		})
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

func request(c *corev1.Container, name corev1.ResourceName) resource.Quantity {
	if q, ok := c.Resources.Requests[name]; ok {
		return q
	}
	return c.Resources.Limits[name]
}

func cpuUsage(req resource.Quantity, percent float64) resource.Quantity {
	m := math.Round(float64(req.MilliValue()) * percent / 100)
	return *resource.NewMilliQuantity(int64(m), resource.DecimalSI)
}

func memoryUsage(req resource.Quantity, percent float64) resource.Quantity {
	b := math.Round(float64(req.Value()) * percent / 100)
	return *resource.NewQuantity(int64(b), resource.BinarySI)
}

// PodMetrics is a reporting pod's metrics at now.
func PodMetrics(pod *corev1.Pod, k Knob, now time.Time) metricsv1beta1.PodMetrics {
	return metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			Labels:            pod.Labels,
			CreationTimestamp: metav1.NewTime(now),
		},
		Timestamp:  metav1.NewTime(now),
		Window:     metav1.Duration{Duration: Window},
		Containers: ContainerUsage(pod, k),
	}
}

// NodeMetrics sums the usage of the pods on each node. Every node gets an
// entry, zero when none of pods runs there; pods on other nodes are left
// out. The result is sorted by node name.
func NodeMetrics(nodes []corev1.Node, pods []metricsv1beta1.PodMetrics, podNode map[string]string, now time.Time) []metricsv1beta1.NodeMetrics {
	sums := make(map[string]corev1.ResourceList, len(nodes))
	for i := range nodes {
		sums[nodes[i].Name] = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(0, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(0, resource.BinarySI),
		}
	}
	for _, pm := range pods {
		sum, ok := sums[podNode[pm.Namespace+"/"+pm.Name]]
		if !ok {
			continue
		}
		for _, c := range pm.Containers {
			for name, q := range c.Usage {
				total := sum[name]
				total.Add(q)
				sum[name] = total
			}
		}
	}
	out := make([]metricsv1beta1.NodeMetrics, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		out = append(out, metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(now),
			Window:     metav1.Duration{Duration: Window},
			Usage:      sums[n.Name],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
