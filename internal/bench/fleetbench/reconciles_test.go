package fleetbench

import (
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestReconcileCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total"}, []string{"controller", "result"})
	other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shepherd_work_apply_total"}, []string{"result"})
	reg.MustRegister(total, other)
	total.WithLabelValues("execution", "success").Add(5)
	total.WithLabelValues("execution", "error").Add(2)
	total.WithLabelValues("work-status", "requeue_after").Add(3)
	other.WithLabelValues("success").Add(100)
	got, err := reconcileCounts(reg)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"execution": 7, "work-status": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("reconcileCounts = %v, want %v (every result summed, other counters left out)", got, want)
	}
}

func TestReconcileRates(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after map[string]float64
		window        time.Duration
		want          []ReconcileRate
	}{
		{"most first, ties by name, idle ones left out",
			map[string]float64{"execution": 10, "work-status": 4, "binding": 3, "idle": 9},
			map[string]float64{"execution": 30, "work-status": 44, "binding": 23, "idle": 9, "new": 20},
			10 * time.Second,
			[]ReconcileRate{{"work-status", 4}, {"binding", 2}, {"execution", 2}, {"new", 2}}},
		{"nothing reconciled", map[string]float64{"a": 1}, map[string]float64{"a": 1}, time.Second, []ReconcileRate{}},
		{"no window", map[string]float64{}, map[string]float64{"a": 1}, 0, []ReconcileRate{}},
	} {
		if got := reconcileRates(tc.before, tc.after, tc.window); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: reconcileRates = %v, want %v", tc.name, got, tc.want)
		}
	}
}
