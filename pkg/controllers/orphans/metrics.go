package orphans

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	removed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_orphans_removed_total",
		Help: "Member objects Shepherd applied whose Work was gone, removed by the orphan sweep.",
	}, []string{"cluster"})
	sweepDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "shepherd_orphan_sweep_duration_seconds",
		Help:    "Time one sweep of one member took: discovery, one metadata list per kind, the hub's Works, the deletions.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 10),
	})
)

func init() { metrics.Registry.MustRegister(removed, sweepDuration) }
