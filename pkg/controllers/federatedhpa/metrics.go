package federatedhpa

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	desiredReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_federatedhpa_desired_replicas",
		Help: "The replica count a FederatedHPA computed last.",
	}, []string{"namespace", "name"})
	currentReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_federatedhpa_current_replicas",
		Help: "The target's replicas when a FederatedHPA computed last.",
	}, []string{"namespace", "name"})
	clusterUtilization = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_federatedhpa_cluster_utilization",
		Help: "Average utilization (percent of requests) of a FederatedHPA target's pods in one member cluster, per resource.",
	}, []string{"namespace", "name", "cluster", "resource"})
)

func init() { metrics.Registry.MustRegister(desiredReplicas, currentReplicas, clusterUtilization) }

// forget drops a deleted FederatedHPA's series.
func forget(namespace, name string) {
	desiredReplicas.DeleteLabelValues(namespace, name)
	currentReplicas.DeleteLabelValues(namespace, name)
	clusterUtilization.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
}
