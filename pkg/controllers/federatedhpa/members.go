package federatedhpa

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// Members reads what the controller needs from a member cluster: the
// target's pods, their metrics and the member's own autoscalers.
// NewMembers reads them through the member clients; tests give a fake.
type Members interface {
	// Pods lists the pods of namespace that selector selects.
	Pods(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string, selector labels.Selector) ([]corev1.Pod, error)
	// PodMetrics lists the metrics.k8s.io PodMetrics of those pods.
	PodMetrics(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string, selector labels.Selector) ([]metricsv1beta1.PodMetrics, error)
	// HorizontalPodAutoscalers lists the autoscalers of namespace.
	HorizontalPodAutoscalers(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string) ([]autoscalingv2.HorizontalPodAutoscaler, error)
}

// NewMembers reads members through their Push clients: pods and
// autoscalers with the typed client, PodMetrics with the member's REST
// client from metrics.k8s.io/v1beta1 (metrics-server or any provider of
// that API).
func NewMembers(clients *clusterclient.Cache) Members { return memberClients{clients} }

type memberClients struct{ clients *clusterclient.Cache }

func (m memberClients) Pods(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string, selector labels.Selector) ([]corev1.Pod, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := c.Kubernetes.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}

func (m memberClients) PodMetrics(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string, selector labels.Selector) ([]metricsv1beta1.PodMetrics, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	raw, err := c.Kubernetes.Discovery().RESTClient().Get().
		AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", namespace, "pods").
		Param("labelSelector", selector.String()).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("reading metrics.k8s.io/v1beta1 PodMetrics (is metrics-server running in the member?): %w", err)
	}
	list := &metricsv1beta1.PodMetricsList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("decoding metrics.k8s.io/v1beta1 PodMetrics: %w", err)
	}
	return list.Items, nil
}

func (m memberClients) HorizontalPodAutoscalers(ctx context.Context, cluster *clusterv1alpha1.Cluster, namespace string) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	c, err := m.clients.ForCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := c.Kubernetes.AutoscalingV2().HorizontalPodAutoscalers(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing HorizontalPodAutoscalers: %w", err)
	}
	return list.Items, nil
}
