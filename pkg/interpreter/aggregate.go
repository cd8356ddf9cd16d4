package interpreter

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// AggregateStatus adds up the kind's integer status fields over the
// members' raw statuses, so that the hub's template reads like one big
// workload (readyReplicas 5 = 3 in one member + 2 in another). Conditions,
// observedGeneration and times do not add up and are left out. ok is false
// for kinds whose status is not aggregated.
func (l *Layered) AggregateStatus(gk schema.GroupKind, items []workv1alpha1.AggregatedStatusItem) (map[string]any, bool) {
	k := l.lookup(gk)
	if k == nil || len(k.summed) == 0 {
		return nil, false
	}
	sums := make(map[string]int64, len(k.summed))
	for _, f := range k.summed {
		sums[f] = 0
	}
	for _, item := range items {
		if item.Status == nil {
			continue
		}
		var st map[string]any
		if json.Unmarshal(item.Status.Raw, &st) != nil {
			continue
		}
		for _, f := range k.summed {
			if n, ok := st[f].(float64); ok {
				sums[f] += int64(n)
			}
		}
	}
	out := make(map[string]any, len(sums))
	for f, n := range sums {
		out[f] = n
	}
	return out, true
}
