package serviceimport

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// imported is set per Service at each reconcile and deleted when the
	// Service is no longer imported, so the series count is the number
	// of imported Services.
	imported = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_mcs_service_exporting_clusters",
		Help: "Clusters whose endpoints a multi-cluster Service's import carries, per Service.",
	}, []string{"namespace", "name"})
	conflicts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_mcs_service_conflict",
		Help: "1 while the exports of a multi-cluster Service disagree (their ServiceExports have Conflict=True), per Service and reason.",
	}, []string{"namespace", "name", "reason"})
)

func init() { metrics.Registry.MustRegister(imported, conflicts) }

// observe records one Service's import: how many clusters serve it and
// its conflict, if any (reason "" for none).
func observe(namespace, name string, clusters int, reason string) {
	conflicts.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
	if clusters == 0 {
		imported.DeleteLabelValues(namespace, name)
		return
	}
	imported.WithLabelValues(namespace, name).Set(float64(clusters))
	if reason != "" {
		conflicts.WithLabelValues(namespace, name, reason).Set(1)
	}
}
