package federatedhpa

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/podsample"
)

// Members reads what the controller needs from a member cluster: the
// target's pods, their metrics (metrics.k8s.io and custom.metrics.k8s.io)
// and the member's own autoscalers.
// NewMembers reads Push members through the member clients,
// NewPullMembers Pull members through their agents' samples; tests give
// a fake.
type Members interface {
	// Pods lists the pods of the workload's namespace its selector selects.
	Pods(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]corev1.Pod, error)
	// PodMetrics lists the metrics.k8s.io PodMetrics of those pods.
	PodMetrics(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]metricsv1beta1.PodMetrics, error)
	// CustomMetric reads a custom.metrics.k8s.io metric in the
	// workload's namespace: a Pods metric's values for those pods, or an
	// Object metric's value (one item). A metric the member does not
	// serve is an error (NotFound from its API).
	CustomMetric(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error)
	// HorizontalPodAutoscalers lists the member's autoscalers of the
	// workload's namespace (at least those of the workload).
	HorizontalPodAutoscalers(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error)
}

// Workload is the target as a member is asked about it.
type Workload struct {
	Namespace string
	Selector  labels.Selector
	// Ref names the target (its Works are found by its kind and name).
	Ref autoscalingv2.CrossVersionObjectReference
}

// NewMembers reads members through their Push clients: pods and
// autoscalers with the typed client, PodMetrics with the member's REST
// client from metrics.k8s.io/v1beta1 (metrics-server or any provider of
// that API), custom metrics from custom.metrics.k8s.io/v1beta2 (a metrics
// adapter of the member), an Object metric's resource found by the
// member's discovery.
func NewMembers(clients *clusterclient.Cache) Members { return memberClients{clients} }

type memberClients struct{ clients *clusterclient.Cache }

func (m memberClients) Pods(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]corev1.Pod, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := c.Kubernetes.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector.String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}

func (m memberClients) PodMetrics(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]metricsv1beta1.PodMetrics, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return podsample.ReadPodMetrics(ctx, c.Kubernetes, w.Namespace, w.Selector.String())
}

func (m memberClients) CustomMetric(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return podsample.ReadCustomMetric(ctx, c.Kubernetes, c.Mapper, w.Namespace, w.Selector.String(), req)
}

func (m memberClients) HorizontalPodAutoscalers(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := c.Kubernetes.AutoscalingV2().HorizontalPodAutoscalers(w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing HorizontalPodAutoscalers: %w", err)
	}
	return list.Items, nil
}
