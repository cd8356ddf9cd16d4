package scheduler

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// FuzzHeldClustersStay places a random workload on a random fleet, then
// gives the clusters it runs on an untolerated NoSchedule taint or a gap in
// API discovery (the workload's kind missing), and schedules it again in
// Steady mode, with the same replicas and scaled up. Filters keep new
// placements off such clusters but never remove what runs: with the same
// replicas the placement is unchanged, and a scale-up without spread
// constraints keeps every cluster (room is plentiful, so only the taint or
// the API gap could remove one).
func FuzzHeldClustersStay(f *testing.F) {
	for _, seed := range [][2]uint64{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {42, 42}} {
		f.Add(seed[0], seed[1])
	}
	s := NewDefault()
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, a, b uint64) {
		r := rand.New(rand.NewPCG(a, b))
		fleet := randomFleet(r)
		names := make([]string, len(fleet))
		for i := range fleet {
			names[i] = fleet[i].Name
			// Room decides nothing here: a scale-up may need more room
			// than a cluster has, and leaving it then is right.
			fleet[i].Available = framework.Resources{MilliCPU: 1 << 40, Memory: 1 << 50, Pods: 1 << 30}
		}
		w := deployment("w", int32(1+r.IntN(30)), randomPlacement(r, names))
		res, err := s.Schedule(ctx, snapshot(t, fleet...), w)
		if err != nil || len(res.Targets) == 0 {
			return
		}
		held := map[string]bool{}
		for _, tc := range res.Targets {
			held[tc.Name] = true
		}
		changed := slices.Clone(fleet)
		for i := range changed {
			if !held[changed[i].Name] {
				continue
			}
			if r.IntN(2) == 0 {
				changed[i].Taints = append(slices.Clone(changed[i].Taints), corev1.Taint{Key: "held-fuzz", Effect: corev1.TaintEffectNoSchedule})
			} else {
				changed[i].APIs = []string{"v1/ConfigMap"}
			}
		}
		snap := snapshot(t, changed...)
		for _, extra := range []int32{0, int32(1 + r.IntN(10))} {
			again := deployment("w", w.Replicas+extra, w.Placement)
			again.Previous, again.ObservedAffinityName = res.Targets, res.AffinityName
			res2, err := s.Schedule(ctx, snap, again)
			if err != nil {
				if extra > 0 {
					continue // the new replicas may not fit; nothing was removed
				}
				t.Fatalf("the placement in force became unschedulable: %v\nwas %v", err, res.Targets)
			}
			if extra == 0 && !reflect.DeepEqual(res2.Targets, res.Targets) {
				t.Fatalf("same replicas moved:\nwas %v\nnow %v", res.Targets, res2.Targets)
			}
			if len(w.Placement.SpreadConstraints) > 0 {
				continue // a scale-up may need other groups to meet a spread constraint
			}
			now := map[string]bool{}
			for _, tc := range res2.Targets {
				now[tc.Name] = true
			}
			for n := range held {
				if !now[n] {
					t.Fatalf("scale-up by %d removed %s:\nwas %v\nnow %v", extra, n, res.Targets, res2.Targets)
				}
			}
		}
	})
}
