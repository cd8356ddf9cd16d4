package clusterstatus

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	clusterReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shepherd_cluster_ready",
		Help: "1 when the member cluster's Ready condition is True, 0 otherwise.",
	}, []string{"cluster"})
	probeDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shepherd_cluster_probe_duration_seconds",
		Help:    "Duration of member cluster probes, by resulting Ready status.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"ready"})
	statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_cluster_status_writes_total",
		Help: "Cluster status writes; changed=false are lastProbeTime refreshes.",
	}, []string{"changed"})
	taintChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_cluster_taint_changes_total",
		Help: "Readiness taints added to or removed from member clusters.",
	}, []string{"taint", "change"})
)

func init() {
	metrics.Registry.MustRegister(clusterReady, probeDuration, statusWrites, taintChanges)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
