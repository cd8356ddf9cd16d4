package podsample

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/client-go/kubernetes"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// ReadPodMetrics lists the metrics.k8s.io/v1beta1 PodMetrics of the pods
// of namespace that selector selects, through kube's REST client
// (metrics-server or any provider of that API).
func ReadPodMetrics(ctx context.Context, kube kubernetes.Interface, namespace, selector string) ([]metricsv1beta1.PodMetrics, error) {
	raw, err := kube.Discovery().RESTClient().Get().
		AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", namespace, "pods").
		Param("labelSelector", selector).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("reading metrics.k8s.io/v1beta1 PodMetrics (is metrics-server running in the member?): %w", err)
	}
	list := &metricsv1beta1.PodMetricsList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("decoding metrics.k8s.io/v1beta1 PodMetrics: %w", err)
	}
	return list.Items, nil
}
