package core

import (
	"cmp"
	"errors"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"slices"
	"testing"
)

// FuzzSteadyScale places a workload from scratch, then rescales it in
// Steady mode with the placement applied. Without spread constraints (which
// may move a replica to keep every group served), a scale by d changes
// exactly d replicas (none moves between clusters; static weights too, the
// method being house-monotone), and an Aggregated scale-down ends on as few
// of its clusters as hold the new total.
func FuzzSteadyScale(f *testing.F) {
	for _, seed := range [][]byte{
		{25, 12, 17, 1, 3, 0},
		{5, 20, 30, 0, 3, 0, 2, 1, 1},
		{40, 8, 9, 0, 4, 0, 1, 1, 1, 1, 5, 3, 2, 0},
		{0, 15, 25, 1, 2, 0},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		delta := int32(data[0]%41) - 20
		cands, r := fleetFrom(data[1:])
		before, err := Schedule(cands, fresh(r))
		if err != nil {
			return
		}
		next := steadyFrom(cands, before)
		r2 := r
		r2.Mode, r2.Replicas = Steady, max(r.Replicas+delta, 0)
		after, err := Schedule(next, r2)
		if err != nil {
			var ue *UnschedulableError
			if !errors.As(err, &ue) {
				t.Fatalf("not an UnschedulableError: %v", err)
			}
			return
		}
		checkResult(t, next, r2, after)
		name := placement.StrategyName(r.Placement, r.Replicas)
		if name == placement.StrategyDuplicated || name != placement.StrategyName(r2.Placement, r2.Replicas) ||
			len(r.Placement.SpreadConstraints) > 0 && !staticWeighted(r.Placement) {
			return
		}
		prev := map[string]int32{}
		for _, tc := range before.Targets {
			prev[tc.Name] = tc.Replicas
		}
		now := map[string]int32{}
		for _, tc := range after.Targets {
			now[tc.Name] = tc.Replicas
		}
		// No replica moves between clusters: what changes is the scale.
		var moved int32
		for n, q := range now {
			if q > prev[n] {
				moved += q - prev[n]
			}
		}
		for n, p := range prev {
			if now[n] < p {
				moved += p - now[n]
			}
		}
		if want := max(r2.Replicas-r.Replicas, r.Replicas-r2.Replicas); moved != want {
			t.Fatalf("%s %d->%d changed %d replicas, want %d:\nwas %s\nnow %s", name, r.Replicas, r2.Replicas, moved, want,
				show(before.Targets), show(after.Targets))
		}
		// Aggregated scale-down ends on as few of its clusters as hold the
		// new total.
		if name == placement.StrategyAggregated && r2.Replicas < r.Replicas && r2.Replicas > 0 {
			held := make([]int64, 0, len(before.Targets))
			for _, tc := range before.Targets {
				held = append(held, int64(tc.Replicas))
			}
			slices.SortFunc(held, func(a, b int64) int { return cmp.Compare(b, a) })
			need, sum := 0, int64(0)
			for sum < int64(r2.Replicas) {
				sum += held[need]
				need++
			}
			if len(after.Targets) != need {
				t.Fatalf("aggregated %d->%d ends on %d clusters, %d hold it:\nwas %s\nnow %s", r.Replicas, r2.Replicas,
					len(after.Targets), need, show(before.Targets), show(after.Targets))
			}
		}
	})
}
