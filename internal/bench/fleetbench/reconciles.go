package fleetbench

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ReconcileRate is how often one controller reconciled over a window, per
// second: with the writes of the same window, which controller a fleet at
// rest is still busy with.
type ReconcileRate struct {
	Controller string  `json:"controller"`
	PerSecond  float64 `json:"perSecond"`
}

// reconcileCounts reads every controller's reconciles so far, whatever
// their result, from g: controller-runtime's registry, where the
// controllers of this process count them (controller_runtime_reconcile_total).
func reconcileCounts(g prometheus.Gatherer) (map[string]float64, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[label(m, "controller")] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// reconcileRates are the reconciles per second between two readings
// window apart, most first (ties by name), the controllers that
// reconciled only.
func reconcileRates(before, after map[string]float64, window time.Duration) []ReconcileRate {
	out := []ReconcileRate{} // none is a list in the JSON reports
	if window <= 0 {
		return out
	}
	for c, n := range after {
		if d := n - before[c]; d > 0 {
			out = append(out, ReconcileRate{Controller: c, PerSecond: d / window.Seconds()})
		}
	}
	slices.SortFunc(out, func(a, b ReconcileRate) int {
		return cmp.Or(cmp.Compare(b.PerSecond, a.PerSecond), cmp.Compare(a.Controller, b.Controller))
	})
	return out
}
