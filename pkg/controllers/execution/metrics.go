package execution

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	applyTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_work_apply_total",
		Help: "Attempts to apply a Work to its member cluster, by result (success, failure, or conflict: a member object the Work does not own is in the way).",
	}, []string{"result"})
	applyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shepherd_work_apply_duration_seconds",
		Help:    "Time to apply all manifests of a Work to its member cluster, by result.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"result"})
)

func init() {
	metrics.Registry.MustRegister(applyTotal, applyDuration)
}
