package detector

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Operations counted by bindingOps.
const (
	opCreated = "created"
	opUpdated = "updated"
	opDeleted = "deleted"
)

var (
	bindingOps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_detector_bindings_total",
		Help: "Bindings the detector wrote, by binding kind and operation (created, updated, deleted).",
	}, []string{"kind", "operation"})
	watchedKinds = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "shepherd_detector_watched_kinds",
		Help: "Template kinds the detector watches because a policy named them.",
	})
)

func init() {
	metrics.Registry.MustRegister(bindingOps, watchedKinds)
}
