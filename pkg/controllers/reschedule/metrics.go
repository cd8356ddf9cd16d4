package reschedule

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	tasksTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_reschedule_tasks_total",
		Help: "RescheduleTasks completed, by result (AllSucceeded, SomeFailed).",
	}, []string{"result"})
	targetsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_reschedule_targets_total",
		Help: "RescheduleTask targets finished, by phase (Successful, Failed).",
	}, []string{"phase"})
)

func init() {
	metrics.Registry.MustRegister(tasksTotal, targetsTotal)
}
