package core

import (
	"errors"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"math/rand/v2"
	"slices"
	"testing"
)

// fleet is a small multi-cloud fleet; every cluster fits 10 replicas.
// By score: o1 a1 a4 a3 g1 g2 g3 z1 a2 z2 a5 (o1 has no region or zone).
func fleet() []Candidate {
	return []Candidate{
		labelled(c("a1/aws/use1/use1a", 95, 10), "rack", "r1"),
		c("a2/aws/use1/use1a", 60, 10),
		labelled(c("a3/aws/use1/use1b", 85, 10), "rack", "r1"),
		labelled(c("a4/aws/usw2/usw2a", 90, 10), "rack", "r2"),
		c("a5/aws/usw2/usw2a", 40, 10),
		labelled(c("g1/gcp/usc1/usc1a", 80, 10), "rack", "r2"),
		c("g2/gcp/usc1/usc1a", 75, 10),
		labelled(c("g3/gcp/euw1/euw1b", 70, 10), "rack", "r3"),
		labelled(c("z1/azure/eus/eus1", 65, 10), "rack", "r3"),
		c("z2/azure/eus/eus1", 50, 10),
		c("o1/onprem", 99, 10),
	}
}

// outcome is "a1:3 b:2", or "error <constraint>: <message>".
func outcome(t *testing.T, cands []Candidate, r Request) string {
	t.Helper()
	res, err := Schedule(cands, r)
	if err != nil {
		var ue *UnschedulableError
		if !errors.As(err, &ue) {
			t.Fatalf("not an UnschedulableError: %v", err)
		}
		return "error " + ue.Constraint + ": " + ue.Message
	}
	checkResult(t, cands, r, res)
	return show(res.Targets)
}

func TestSelectSpread(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"duplicated without constraints is PickAll", req(2, nil),
			"a1:2 a2:2 a3:2 a4:2 a5:2 g1:2 g2:2 g3:2 o1:2 z1:2 z2:2"},
		{"best N clusters", req(2, duplicatedRS, sc("cluster", 3, 3)), "a1:2 a4:2 o1:2"},
		{"region max takes every cluster of the best regions", req(1, duplicatedRS, sc("region", 2, 2), sc("cluster", 1, 0)),
			"a1:1 a2:1 a3:1 o1:1"},
		{"zone", req(1, duplicatedRS, sc("zone", 3, 3), sc("cluster", 3, 3)), "a1:1 a4:1 o1:1"},
		{"zone forces a third zone", req(1, duplicatedRS, sc("zone", 3, 3), sc("cluster", 4, 4)), "a1:1 a2:1 a4:1 o1:1"},
		{"provider", req(1, duplicatedRS, sc("provider", 2, 2), sc("cluster", 2, 4)), "a1:1 a3:1 a4:1 o1:1"},
		{"provider min skips clusters that cannot complete it", req(1, duplicatedRS, sc("provider", 3, 3), sc("cluster", 3, 3)),
			"a1:1 g1:1 o1:1"},
		{"label", req(1, duplicatedRS, sc("label:rack", 2, 2), sc("cluster", 2, 2)), "a1:1 o1:1"},
		{"missing label is its own group", req(1, duplicatedRS, sc("label:rack", 3, 3), sc("cluster", 3, 3)), "a1:1 a4:1 o1:1"},
		{"region and zone", req(1, duplicatedRS, sc("region", 2, 2), sc("zone", 3, 3), sc("cluster", 3, 3)), "a1:1 a3:1 o1:1"},
		{"provider, region and label", req(1, duplicatedRS, sc("provider", 2, 2), sc("region", 3, 3),
			sc("label:rack", 2, 3), sc("cluster", 3, 3)), "a1:1 a4:1 o1:1"},
		{"dynamic takes clusters until they fit", req(25, dynamicRS), "a1:9 a4:8 o1:8"},
		{"dynamic with region spread", req(15, dynamicRS, sc("region", 3, 3), sc("cluster", 3, 6)), "a1:5 a4:5 o1:5"},
		{"aggregated packs", req(25, aggregatedRS), "a1:9 a4:8 o1:8"}, // in proportion to room among those taken
		{"aggregated never below a minimum", req(5, aggregatedRS, sc("provider", 2, 2), sc("cluster", 2, 0)), "a1:4 o1:1"},
		{"replicas below minGroups: one per group", req(2, dynamicRS, sc("region", 3, 3), sc("cluster", 3, 3)), "a1:1 o1:1"},
		{"equal weights take the best clusters", req(4, equalRS), "a1:1 a3:1 a4:1 o1:1"},
		{"equal weights with spread", req(7, equalRS, sc("provider", 3, 3), sc("cluster", 3, 0)),
			"a1:1 a3:1 a4:1 g1:1 g2:1 g3:1 o1:1"},
		{"no replicas: like duplicated", req(0, dynamicRS, sc("cluster", 2, 2)), "a1:0 o1:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(t, fleet(), tc.req); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Two constraints that only a later combination meets need backtracking:
// x1 is best, but no cluster of another provider has another rack.
func TestSelectBacktracks(t *testing.T) {
	cands := []Candidate{
		labelled(c("x1/aws/r1", 90, 10), "rack", "A"),
		labelled(c("x2/aws/r1", 80, 10), "rack", "B"),
		labelled(c("y1/gcp/r2", 70, 10), "rack", "A"),
		labelled(c("y2/gcp/r2", 60, 10), "rack", "A"),
	}
	r := req(1, duplicatedRS, sc("provider", 2, 2), sc("label:rack", 2, 2), sc("cluster", 2, 2))
	if got := outcome(t, cands, r); got != "x2:1 y1:1" {
		t.Errorf("got %s", got)
	}
}

func TestSelectErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cands []Candidate
		req   Request
		want  string
	}{
		{"too few regions", fleet(), req(1, duplicatedRS, sc("region", 7, 0), sc("cluster", 1, 0)),
			"error spreadConstraints[region].minGroups: spreadConstraints[region].minGroups: need at least 7 regions, 6 available"},
		{"too few clusters", fleet()[:2], req(1, duplicatedRS, sc("cluster", 3, 3)),
			"error spreadConstraints[cluster].minGroups: spreadConstraints[cluster].minGroups: need at least 3 clusters, 2 available"},
		{"too few label values", fleet(), req(9, dynamicRS, sc("label:rack", 5, 0), sc("cluster", 1, 0)),
			`error spreadConstraints[label:rack].minGroups: spreadConstraints[label:rack].minGroups: need at least 5 values of label "rack", 4 available`},
		{"not enough room", fleet(), req(200, dynamicRS),
			"error replicas: replicas: 200 requested, feasible clusters fit 110"},
		{"no room at all", []Candidate{c("a", 1, 0)}, req(2, aggregatedRS),
			"error replicas: replicas: 2 requested, feasible clusters fit 0"},
		{"no clusters", nil, req(2, nil), "error clusters: clusters: no feasible clusters"},
		{"cluster max below region min", fleet(), req(1, duplicatedRS, sc("region", 3, 0), sc("cluster", 1, 2)),
			"error spreadConstraints[region].minGroups: spreadConstraints[region].minGroups: need at least 3 regions, but spreadConstraints[cluster].maxGroups=2 allows only 2 clusters"},
		{"zone max below provider min", fleet(), req(1, duplicatedRS, sc("provider", 2, 0), sc("zone", 1, 1), sc("cluster", 1, 0)),
			"error spreadConstraints[provider].minGroups: spreadConstraints[provider].minGroups: need at least 2 providers, but spreadConstraints[zone].maxGroups allows only 1 zone"},
		{"replicas exceed the best N", fleet(), req(25, dynamicRS, sc("cluster", 1, 2)),
			"error spreadConstraints[cluster].maxGroups: spreadConstraints[cluster].maxGroups: 25 replicas do not fit in 2 clusters (the best 2 fit 20)"},
		{"replicas exceed the largest region", fleet(), req(31, aggregatedRS, sc("region", 1, 1), sc("cluster", 1, 0)),
			"error spreadConstraints[region].maxGroups: spreadConstraints[region].maxGroups: 31 replicas do not fit in 1 region (the largest fit 30)"},
		{"min above max", fleet(), req(1, duplicatedRS, sc("zone", 3, 2), sc("cluster", 1, 0)),
			"error spreadConstraints[zone]: spreadConstraints[zone]: minGroups 3 is more than maxGroups 2"},
		{"no combination", []Candidate{labelled(c("x/p/r1", 1, 5), "rack", "A"), labelled(c("y/p/r2", 1, 5), "rack", "B")},
			req(2, dynamicRS, sc("region", 2, 2), sc("label:rack", 1, 1), sc("cluster", 1, 0)),
			"error spreadConstraints: spreadConstraints: no set of clusters meets every spread constraint and fits 2 replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(t, tc.cands, tc.req); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestExplanations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cands   []Candidate
		req     Request
		cluster string
		want    string
	}{
		{"best N", fleet(), req(1, duplicatedRS, sc("cluster", 3, 3)), "a3",
			"lower score than the 3 selected clusters (spreadConstraints[cluster].maxGroups=3)"},
		{"group max", fleet(), req(1, duplicatedRS, sc("region", 2, 2), sc("cluster", 1, 0)), "g1",
			`spreadConstraints[region].maxGroups=2: its region "usc1" is not one of the 2 selected`},
		{"capacity reached", fleet(), req(5, dynamicRS), "a1",
			"not needed: the selected clusters already fit all 5 replicas"},
		{"capacity and spread reached", fleet(), req(5, dynamicRS, sc("region", 2, 0), sc("cluster", 2, 0)), "g1",
			"not needed: the selected clusters already fit all 5 replicas and meet the spread constraints"},
		{"static weight", []Candidate{weight(c("a", 1, 3), 2), c("b", 1, 1)}, req(3, staticRS), "b",
			"static weight 0: no rule of the staticWeightList matches it"},
		{"zero share", []Candidate{weight(c("a", 1, 2), 9), weight(c("b", 1, 1), 1)}, req(2, staticRS), "b",
			"selected, but its share of the 2 replicas rounds down to 0"},
		{"no room", []Candidate{c("a", 1, 5), c("b", 1, 0)}, req(3, dynamicRS), "b", "no room: not one replica fits"},
		{"kept in steady mode", []Candidate{held(c("a", 1, 1), 1), c("b", 9, 1)}, req(1, duplicatedRS, sc("cluster", 1, 1)), "b",
			"spreadConstraints[cluster].maxGroups=1: the current clusters keep their places (Steady mode)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Schedule(tc.cands, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.NotSelected {
				if e.Cluster == tc.cluster {
					if e.Reason != tc.want {
						t.Errorf("got  %s\nwant %s", e.Reason, tc.want)
					}
					return
				}
			}
			t.Errorf("%s not explained: targets %s", tc.cluster, show(res.Targets))
		})
	}
}

// Capacity bounds prune what the pre-checks cannot see: here only one zone
// has big clusters, so two zones never fit 600 replicas in two clusters.
// The search must say so without spending its budget.
func TestSearchPrunes(t *testing.T) {
	cands := syntheticFleet(5000)
	for i := range cands {
		cands[i].Available = 10
		if cands[i].Zone == "aws-region-0-a" {
			cands[i].Available = 500
		}
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{req(600, aggregatedRS, sc("zone", 2, 2), sc("cluster", 2, 2)),
			"error spreadConstraints: spreadConstraints: no set of clusters meets every spread constraint and fits 600 replicas"},
		{req(600, dynamicRS, sc("zone", 2, 2), sc("cluster", 2, 2)),
			"error spreadConstraints: spreadConstraints: no set of clusters meets every spread constraint and fits 600 replicas"},
		{req(600, aggregatedRS, sc("zone", 2, 2), sc("cluster", 2, 3)), "member-00069:1 member-01355:299 member-01577:300"},
		{req(510, aggregatedRS, sc("zone", 2, 2), sc("cluster", 2, 4)), "member-00069:10 member-01577:500"},
	} {
		if got := outcome(t, cands, tc.req); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// The lazy order hands out exactly a full sort, past its first batch too.
func TestOrderMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 63, 64, 65, 300} {
		for _, mode := range []Mode{Steady, Fresh} {
			cands := syntheticFleet(n)
			for i := range cands {
				cands[i].Score = int64(rng.IntN(4))
				cands[i].Available = int64(rng.IntN(3))
				cands[i].Held = rng.IntN(5) == 0
			}
			r := req(1, nil)
			r.Mode = mode
			p, err := newPlan(cands, r, placement.StrategyDuplicated, Shape{})
			if err != nil {
				t.Fatal(err)
			}
			o := newOrder(p)
			want := slices.Clone(p.members)
			slices.SortFunc(want, func(a, b int32) int {
				if o.better(a, b) {
					return -1
				}
				return 1
			})
			for pos := range want {
				if got := o.at(pos); got != want[pos] {
					t.Fatalf("n=%d mode=%d: position %d is %d, want %d", n, mode, pos, got, want[pos])
				}
			}
		}
	}
}
