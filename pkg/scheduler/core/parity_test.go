package core

import (
	"fmt"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"testing"
)

// The assignment cases of Karmada v1.18's scheduler (its assignment and
// division tables), run through Shepherd's strategies on the same selected
// clusters: a migrated policy divides replicas as Karmada does. Each
// cluster is "name=available" or "name=available/previous".
func TestKarmadaAssignmentParity(t *testing.T) {
	const U = Unlimited
	for _, tc := range []struct {
		name     string
		strategy string
		replicas int32
		clusters []string
		weights  []int64 // static weights, in cluster order
		want     string
	}{
		{"static 12 by 3:2:1", placement.StrategyStaticWeight, 12, []string{"m1", "m2", "m3"}, []int64{3, 2, 1}, "m1:6 m2:4 m3:2"},
		{"static 12, default weight", placement.StrategyStaticWeight, 12, []string{"m1", "m2", "m3"}, nil, "m1:4 m2:4 m3:4"},
		{"static 13 by 3:2:1", placement.StrategyStaticWeight, 13, []string{"m1", "m2", "m3"}, []int64{3, 2, 1}, "m1:7 m2:4 m3:2"},
		{"static 14 by 3:2:1", placement.StrategyStaticWeight, 14, []string{"m1", "m2", "m3"}, []int64{3, 2, 1}, "m1:7 m2:5 m3:2"},
		{"static: a cluster without weight is left out", placement.StrategyStaticWeight, 2, []string{"m1", "m2"}, []int64{1, 0}, "m1:2"},
		{"static: the largest of several weights", placement.StrategyStaticWeight, 3, []string{"m1", "m2"}, []int64{2, 1}, "m1:2 m2:1"},

		{"dynamic 12 -> 6 by 1:1:1", placement.StrategyDynamicWeight, 6, []string{"m1=1/2", "m2=1/4", "m3=1/6"}, nil, "m1:1 m2:2 m3:3"},
		{"dynamic 12 -> 24 by 10:10:10", placement.StrategyDynamicWeight, 24, []string{"m1=10/2", "m2=10/4", "m3=10/6"}, nil, "m1:6 m2:8 m3:10"},
		{"dynamic 12 -> 24 by 1:1:1", placement.StrategyDynamicWeight, 24, []string{"m1=1/2", "m2=1/4", "m3=1/6"}, nil, "error"},
		{"dynamic 12 by 6:8:10", placement.StrategyDynamicWeight, 12, []string{"m1=6", "m2=8", "m3=10"}, nil, "m1:3 m2:4 m3:5"},
		{"dynamic 12 by 8:8:10", placement.StrategyDynamicWeight, 12, []string{"m1=8", "m2=8", "m3=10"}, nil, "m1:4 m2:4 m3:4"},
		{"dynamic 12 by 3:3:3", placement.StrategyDynamicWeight, 12, []string{"m1=3", "m2=3", "m3=3"}, nil, "error"},
		{"dynamic 3:3, m3 gone and m2 new", placement.StrategyDynamicWeight, 12, []string{"m1=3/6", "m2=3"}, nil, "m1:9 m2:3"},

		{"aggregated 12 -> 6 by 1:1:1", placement.StrategyAggregated, 6, []string{"m1=1/4", "m2=1/8", "m3=1"}, nil, "m2:6"},
		{"aggregated 12 -> 8 by 100:100", placement.StrategyAggregated, 8, []string{"m1=100/4", "m2=100/8"}, nil, "m2:8"},
		{"aggregated 12 -> 24 by 4:6:8", placement.StrategyAggregated, 24, []string{"m1=4/4", "m2=6/8", "m3=8"}, nil, "m1:7 m2:12 m3:5"},
		{"aggregated 12 -> 24 by 6:6:20", placement.StrategyAggregated, 24, []string{"m1=6/4", "m2=6/8", "m3=20"}, nil, "m1:10 m2:14"},
		{"aggregated 12 -> 24 by 1:1:1", placement.StrategyAggregated, 24, []string{"m1=1/4", "m2=1/8", "m3=1"}, nil, "error"},
		{"aggregated 12 -> 24, m2 gone and m4 new", placement.StrategyAggregated, 24, []string{"m1=4/4", "m3=8", "m4=12"}, nil, "m1:7 m3:7 m4:10"},
		{"aggregated 12 by 6:8:10", placement.StrategyAggregated, 12, []string{"m1=6", "m2=8", "m3=10"}, nil, "m2:5 m3:7"},
		{"aggregated 12 by 12:8:10", placement.StrategyAggregated, 12, []string{"m1=12", "m2=8", "m3=10"}, nil, "m1:12"},
		{"aggregated 12 by 3:3:3", placement.StrategyAggregated, 12, []string{"m1=3", "m2=3", "m3=3"}, nil, "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := map[string]Request{placement.StrategyStaticWeight: req(tc.replicas, staticRS), placement.StrategyDynamicWeight: req(tc.replicas, dynamicRS),
				placement.StrategyAggregated: req(tc.replicas, aggregatedRS)}[tc.strategy]
			if tc.strategy == placement.StrategyStaticWeight && tc.weights == nil {
				rs = req(tc.replicas, equalRS)
			}
			cands := make([]Candidate, len(tc.clusters))
			for i, spec := range tc.clusters {
				var name string
				var avail int64
				var prev int32
				if n, _ := fmt.Sscanf(spec, "%2s=%d/%d", &name, &avail, &prev); n < 2 {
					name, avail = spec, U
				}
				cands[i] = Candidate{Name: name, Available: avail, Previous: prev, Held: prev > 0}
				if tc.weights != nil {
					cands[i].StaticWeight = tc.weights[i]
				}
			}
			s, _ := Lookup(tc.strategy)
			got := "error"
			if out, err := s.Assign(cands, rs); err == nil {
				got = show(out)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
