package scheduling

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	scheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_scheduler_schedule_attempts_total",
		Help: "Scheduling attempts that wrote an outcome, by result (scheduled, unschedulable, error).",
	}, []string{"result"})
	e2eDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shepherd_scheduler_e2e_scheduling_duration_seconds",
		Help:    "Time from taking a binding off the queue to its outcome written (snapshot, cycle and API writes), by result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result"})
	snapshotBuilds = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shepherd_scheduler_snapshot_builds_total",
		Help: "Fleet snapshots built; one per fleet change that a scheduling cycle followed.",
	})
	replicasInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "shepherd_scheduler_replicas_in_flight",
		Help: "Replicas assigned to clusters whose resource summaries do not count them yet, taken out of their room by the last snapshot.",
	})
)

func init() {
	metrics.Registry.MustRegister(scheduleAttempts, e2eDuration, snapshotBuilds, replicasInFlight)
}
