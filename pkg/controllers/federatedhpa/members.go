package federatedhpa

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/podsample"
)

// Members reads what the controller needs from a member cluster: the
// target's pods, their metrics and the member's own autoscalers.
// NewMembers reads Push members through the member clients,
// NewPullMembers Pull members through their agents' samples; tests give
// a fake.
type Members interface {
	// Pods lists the pods of the workload's namespace its selector selects.
	Pods(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]corev1.Pod, error)
	// PodMetrics lists the metrics.k8s.io PodMetrics of those pods.
	PodMetrics(ctx context.Context, cluster *clusterv1alpha1.Cluster, w Workload) ([]metricsv1beta1.PodMetrics, error)
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
// that API).
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
