package binding

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Operations counted by workOps.
const (
	opApplied = "applied"
	opDeleted = "deleted"
)

var workOps = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_binding_works_total",
	Help: "Works the binding controller wrote, by operation (applied, deleted).",
}, []string{"operation"})

func init() {
	metrics.Registry.MustRegister(workOps)
}
