package core

import (
	"slices"
	"strings"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

func TestStrategyName(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Replicas: 3}, placement.StrategyDuplicated},
		{req(3, nil), placement.StrategyDuplicated},
		{req(3, duplicatedRS), placement.StrategyDuplicated},
		{req(0, dynamicRS), placement.StrategyDuplicated},
		{req(3, equalRS), placement.StrategyStaticWeight},
		{req(3, staticRS), placement.StrategyStaticWeight},
		{req(3, dynamicRS), placement.StrategyDynamicWeight},
		{req(3, aggregatedRS), placement.StrategyAggregated},
	} {
		if got := placement.StrategyName(tc.req.Placement, tc.req.Replicas); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.req.Placement, got, tc.want)
		}
		if _, ok := Lookup(tc.want); !ok {
			t.Errorf("%s not registered", tc.want)
		}
	}
}

// Each strategy from scratch and in Steady mode: unchanged input keeps the
// previous result, scale-up keeps the previous replicas and places only
// the new ones, scale-down shrinks in proportion.
func TestStrategies(t *testing.T) {
	const U = Unlimited
	for _, tc := range []struct {
		name  string
		cands []Candidate
		req   Request
		want  string
	}{
		// Static weights: recomputed from the weights alone, every time.
		{"static fresh", []Candidate{weight(c("a", 1, U), 1), weight(c("b", 1, U), 3)}, req(8, staticRS), "a:2 b:6"},
		{"static ignores spread", []Candidate{weight(c("a", 1, U), 1), weight(c("b", 1, U), 3)},
			req(8, staticRS, sc("cluster", 2, 2)), "a:2 b:6"},
		{"static without matches: equal", []Candidate{c("a", 1, U), c("b", 1, U), c("c", 1, U)}, req(7, staticRS), "a:3 b:2 c:2"},
		{"static equal, names descending for this UID", []Candidate{c("a", 1, U), c("b", 1, U), c("c", 1, U)},
			seeded(req(7, staticRS), "b"), "a:2 b:2 c:3"},
		{"static restores a drifted ratio", []Candidate{held(weight(c("a", 1, U), 1), 5), held(weight(c("b", 1, U), 3), 3)}, req(8, staticRS), "a:2 b:6"},
		{"static 1:1 scaled 3 to 4", []Candidate{held(weight(c("a", 1, U), 1), 2), held(weight(c("b", 1, U), 1), 1)}, req(4, staticRS), "a:2 b:2"},
		{"static 2:1:1:1 scaled 9 to 8", []Candidate{held(weight(c("a", 1, U), 2), 3), held(weight(c("b", 1, U), 1), 2),
			held(weight(c("c", 1, U), 1), 2), held(weight(c("d", 1, U), 1), 2)}, req(8, staticRS), "a:3 b:2 c:2 d:1"},
		{"static weights changed 1:1:1:1 to 2:1:1:1", []Candidate{held(weight(c("a", 1, U), 2), 3), held(weight(c("b", 1, U), 1), 3),
			held(weight(c("c", 1, U), 1), 3), held(weight(c("d", 1, U), 1), 3)}, req(12, staticRS), "a:5 b:3 c:2 d:2"},
		{"static weighted cluster added", []Candidate{held(weight(c("a", 1, U), 1), 3), held(weight(c("b", 1, U), 1), 3),
			weight(c("c", 1, U), 1)}, req(6, staticRS), "a:2 b:2 c:2"},
		{"static cluster removed: its replicas follow the weights", []Candidate{held(weight(c("b", 1, U), 1), 2), held(weight(c("c", 1, U), 1), 2)},
			req(6, staticRS), "b:3 c:3"},
		{"static within capacity", []Candidate{weight(c("a", 1, 2), 1), held(weight(c("b", 1, 3), 3), 3)}, req(8, staticRS), "a:2 b:6"},
		{"static beyond capacity is unschedulable", []Candidate{weight(c("a", 1, 1), 1), weight(c("b", 1, U), 3)}, req(8, staticRS),
			"error capacity: replicas: StaticWeight: the weights give cluster a 2 of 8 replicas, but only 1 fit there; " +
				"lower the replicas, change the weights, or divide by dynamicWeight: AvailableReplicas"},
		{"static fresh is the same", []Candidate{held(weight(c("a", 1, U), 1), 5), held(weight(c("b", 1, U), 3), 3)}, fresh(req(8, staticRS)), "a:2 b:6"},

		// Dynamic weights (Webster on capacity; Steady changes only the difference).
		{"dynamic fresh by capacity", []Candidate{c("a", 3, 30), c("b", 2, 10)}, req(36, dynamicRS), "a:27 b:9"},
		{"dynamic takes what fits in score order", []Candidate{c("a", 3, 30), c("b", 2, 10)}, req(8, dynamicRS), "a:8"},
		{"dynamic fresh counts the replicas in place", []Candidate{held(c("a", 3, 0), 4), c("b", 2, 4)}, fresh(req(8, dynamicRS)), "a:4 b:4"},
		{"dynamic unchanged", []Candidate{held(c("a", 1, 1), 5), held(c("b", 1, 10), 5)}, req(10, dynamicRS), "a:5 b:5"},
		{"dynamic scale up within available", []Candidate{held(c("a", 1, 2), 5), held(c("b", 1, 10), 5)}, req(16, dynamicRS), "a:6 b:10"},
		{"dynamic scale down in proportion", []Candidate{held(c("a", 1, 0), 6), held(c("b", 1, 0), 3), held(c("c", 1, 0), 1)}, req(5, dynamicRS), "a:3 b:1 c:1"},
		{"dynamic replaces a lost cluster", []Candidate{held(c("a", 1, 2), 5), c("b", 1, 10)}, req(10, dynamicRS), "a:6 b:4"},

		// Aggregated: the clusters holding most first, in proportion among those taken.
		{"aggregated fresh packs", []Candidate{c("a", 3, 4), c("b", 2, 10), c("c", 1, 20)}, req(12, aggregatedRS), "c:12"},
		{"aggregated fewest", []Candidate{c("a", 3, 4), c("b", 2, 10), c("c", 1, 10)}, req(12, aggregatedRS), "a:3 b:9"},
		{"aggregated prefers score among the fewest", []Candidate{c("a", 3, 10), c("b", 2, 10), c("c", 1, 10)}, req(12, aggregatedRS), "a:6 b:6"},
		{"aggregated unchanged", []Candidate{held(c("a", 1, 0), 3), held(c("b", 9, 20), 3)}, req(6, aggregatedRS), "a:3 b:3"},
		{"aggregated scale up fills held first", []Candidate{held(c("a", 1, 10), 3), c("b", 9, 20)}, req(10, aggregatedRS), "a:10"},
		{"aggregated scale up overflows to the best", []Candidate{held(c("a", 1, 2), 3), c("b", 9, 20), c("c", 5, 20)}, req(10, aggregatedRS), "a:4 b:6"},
		{"aggregated scale down keeps the fewest clusters", []Candidate{held(c("a", 1, 0), 8), held(c("b", 1, 0), 4)}, req(6, aggregatedRS), "a:6"},
		{"aggregated 12 to 6 where one cluster holds 6", []Candidate{held(c("a", 1, 0), 2), held(c("b", 1, 0), 4), held(c("c", 1, 0), 6)},
			req(6, aggregatedRS), "c:6"},

		{"duplicated steady adds new clusters", []Candidate{held(c("a", 1, 0), 3), c("b", 1, 0)}, req(3, duplicatedRS), "a:3 b:3"},
		{"duplicated scales every target", []Candidate{held(c("a", 1, 0), 3), held(c("b", 1, 0), 3)}, req(5, duplicatedRS), "a:5 b:5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(t, tc.cands, tc.req); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// PickN in Steady mode: raising N only adds clusters, lowering N removes
// the lowest-scored ones first, and Fresh mode picks the best again.
func TestPickNSteady(t *testing.T) {
	base := fleet()
	placed := map[string]bool{"a3": true, "g1": true, "z1": true}
	for i := range base {
		if placed[base[i].Name] {
			base[i] = held(base[i], 2)
		}
	}
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"unchanged", req(2, duplicatedRS, sc("cluster", 3, 3)), "a3:2 g1:2 z1:2"},
		{"raise", req(2, duplicatedRS, sc("cluster", 5, 5)), "a1:2 a3:2 g1:2 o1:2 z1:2"},
		{"lower", req(2, duplicatedRS, sc("cluster", 2, 2)), "a3:2 g1:2"},
		{"fresh", fresh(req(2, duplicatedRS, sc("cluster", 3, 3))), "a1:2 a4:2 o1:2"},
		{"held still meet a new constraint", req(2, duplicatedRS, sc("provider", 3, 3), sc("cluster", 3, 3)), "a3:2 g1:2 z1:2"},
		{"held replaced where they no longer do", req(2, duplicatedRS, sc("region", 2, 2), sc("cluster", 3, 3)), "a1:2 a3:2 g1:2"},
		{"divided steady keeps replicas", req(6, dynamicRS, sc("cluster", 3, 3)), "a3:2 g1:2 z1:2"},
		{"divided raise moves one replica to the new cluster", req(6, dynamicRS, sc("cluster", 4, 4)), "a3:1 g1:2 o1:1 z1:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(t, base, tc.req); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The strategy table: every name once, in a fixed order, each found by
// Lookup, and a caller changing what Strategies returned changes nothing.
func TestStrategyTable(t *testing.T) {
	want := []string{placement.StrategyDuplicated, placement.StrategyStaticWeight, placement.StrategyDynamicWeight, placement.StrategyAggregated}
	var got []string
	for _, s := range Strategies() {
		got = append(got, s.Name())
		if found, ok := Lookup(s.Name()); !ok || found != s {
			t.Errorf("Lookup(%q) = %v, %v; want the table's entry", s.Name(), found, ok)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("strategies %v, want %v in that order", got, want)
	}
	if _, ok := Lookup("nope"); ok {
		t.Errorf("Lookup of an unknown name succeeded")
	}
	s := Strategies()
	s[0] = nil
	if Strategies()[0] == nil {
		t.Errorf("changing the slice Strategies returned changed the table")
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Lookup(placement.StrategyAggregated) }); n != 0 {
		t.Errorf("Lookup allocates %v times; Schedule calls it once per workload", n)
	}
}

// Schedule checks what a strategy returns. The plan is built as newPlan
// builds one (dropped included), so a check that comes after the
// explanations of the clusters left out is reached too.
func TestFinishChecksTargets(t *testing.T) {
	p := &plan{cands: []Candidate{c("a", 1, 1), c("b", 1, 1)}, req: req(2, dynamicRS), shape: Shape{Divided: true, Capacity: true},
		caps: []int64{1, 1}, dropped: make([]uint8, 2), clusterMin: 1, clusterMax: noMax}
	for _, tc := range []struct {
		out  []workv1alpha1.TargetCluster
		want string
	}{
		{[]workv1alpha1.TargetCluster{{Name: "zz", Replicas: 2}}, "target zz was not selected or comes twice"},
		{[]workv1alpha1.TargetCluster{{Name: "b", Replicas: 2}}, "target b was not selected or comes twice"},
		{[]workv1alpha1.TargetCluster{{Name: "a", Replicas: 1}, {Name: "a", Replicas: 1}}, "target a was not selected or comes twice"},
		{[]workv1alpha1.TargetCluster{{Name: "a", Replicas: 2}}, "more than the 1 that fit"},
		{[]workv1alpha1.TargetCluster{{Name: "a", Replicas: 1}}, "targets hold 1 replicas, not 2"},
	} {
		_, err := p.finish(tc.out, []int32{0})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("output %v: got %v, want %q", tc.out, err, tc.want)
		}
	}
}
