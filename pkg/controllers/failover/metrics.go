package failover

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_failover_evictions_total",
		Help: "Clusters evicted from bindings by failover, by reason (ApplicationFailure, TaintUntolerated).",
	}, []string{"reason"})
	tasksFinished = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shepherd_failover_eviction_tasks_finished_total",
		Help: "Graceful eviction tasks removed because their old copy may go.",
	})
)

func init() { metrics.Registry.MustRegister(evictions, tasksFinished) }
