package descheduler

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var replicasMoved = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "shepherd_descheduler_replicas_moved_total",
	Help: "Replicas taken back from clusters whose scheduler could not place them for longer than the unschedulable threshold.",
})

var gangsMoved = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "shepherd_descheduler_gangs_moved_total",
	Help: "Gangs moved whole off a cluster where some of their replicas stayed unschedulable for longer than the unschedulable threshold, one per cluster.",
})

func init() { metrics.Registry.MustRegister(replicasMoved, gangsMoved) }
