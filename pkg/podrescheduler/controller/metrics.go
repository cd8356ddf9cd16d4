package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Outcomes counted by failures.
const (
	outcomeRescheduled  = "rescheduled"   // workload pod deleted for its controller to recreate
	outcomeRecreated    = "recreated"     // owner-less pod recreated by the rescheduler
	outcomeLimitReached = "limit_reached" // failure after the last allowed retry: left alone
)

var failures = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_podrescheduler_failures_total",
	Help: "Pod failures handled by the pod rescheduler, by reason (OOMKilled, CrashLoopBackOff, Failed:<reason>, ...) and outcome (rescheduled, recreated, limit_reached).",
}, []string{"reason", "outcome"})

func init() {
	metrics.Registry.MustRegister(failures)
}
