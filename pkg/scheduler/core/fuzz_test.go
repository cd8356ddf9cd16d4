package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// bytesource reads fuzz input, yielding zeros once it runs out, so every
// input is a valid fleet.
type bytesource struct{ b []byte }

func (s *bytesource) next() int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v
}

// pick returns a value in [0, n).
func (s *bytesource) pick(n int) int { return s.next() % n }

var rsChoices = []*policyv1alpha1.ReplicaSchedulingStrategy{nil, duplicatedRS, equalRS, dynamicRS, aggregatedRS, staticRS}

// fleetFrom builds candidates and a request from fuzz bytes: up to 23
// clusters (or 60 to 159) over a small topology with frequent ties and
// missing fields, any strategy, and up to five spread constraints.
func fleetFrom(data []byte) ([]Candidate, Request) {
	s := &bytesource{b: data}
	n := 1 + s.pick(24)
	if n == 24 {
		// Now and then a fleet past the order's first batch; once the
		// input runs out its clusters tie on everything but the name.
		n = 60 + s.pick(100)
	}
	r := Request{Replicas: int32(s.pick(40)), Mode: Mode(s.pick(2)),
		Placement: &policyv1alpha1.Placement{ReplicaScheduling: rsChoices[s.pick(len(rsChoices))]}}
	mask := s.next()
	for k, key := range []string{"cluster", "region", "zone", "provider", "label:rack"} {
		if mask&(1<<k) == 0 {
			continue
		}
		lo := int32(1 + s.pick(3))
		hi := int32(0)
		if v := s.pick(4); v > 0 {
			hi = lo + int32(v) - 1
		}
		r.Placement.SpreadConstraints = append(r.Placement.SpreadConstraints, sc(key, lo, hi))
	}
	cands := make([]Candidate, n)
	for i := range cands {
		cd := Candidate{Name: fmt.Sprintf("m%02d", i)}
		if v := s.pick(4); v > 0 {
			cd.Provider = fmt.Sprintf("p%d", v)
		}
		if v := s.pick(4); v > 0 {
			cd.Region = fmt.Sprintf("r%d", v)
		}
		if v := s.pick(4); v > 0 {
			cd.Zone = fmt.Sprintf("z%d", v)
		}
		if v := s.pick(4); v > 0 {
			cd.Labels = map[string]string{"rack": fmt.Sprintf("k%d", v)}
		}
		cd.Score = int64(s.pick(6)) * 10
		cd.Available = int64(s.pick(12))
		if cd.Available == 11 {
			cd.Available = Unlimited
		}
		cd.StaticWeight = int64(s.pick(4))
		if v := s.pick(8); v < 3 {
			cd.Held, cd.Previous = true, int32(v*3)
		}
		cands[i] = cd
	}
	return cands, r
}

// checkResult asserts the invariants every result must satisfy.
func checkResult(t *testing.T, cands []Candidate, r Request, res Result) {
	t.Helper()
	name := placement.StrategyName(r.Placement, r.Replicas)
	divided := name != placement.StrategyDuplicated
	byName := map[string]*Candidate{}
	for i := range cands {
		byName[cands[i].Name] = &cands[i]
	}
	seen := map[string]bool{}
	var sum int64
	for k, tc := range res.Targets {
		cd := byName[tc.Name]
		switch {
		case cd == nil:
			t.Fatalf("target %s is not a candidate", tc.Name)
		case k > 0 && res.Targets[k-1].Name >= tc.Name:
			t.Fatalf("targets not sorted by name: %s", show(res.Targets))
		case tc.State != "":
			t.Fatalf("target %s has state %q", tc.Name, tc.State)
		case divided && tc.Replicas <= 0:
			t.Fatalf("divided target %s has %d replicas", tc.Name, tc.Replicas)
		case !divided && tc.Replicas != r.Replicas:
			t.Fatalf("duplicated target %s has %d replicas, want %d", tc.Name, tc.Replicas, r.Replicas)
		case (name == placement.StrategyDynamicWeight || name == placement.StrategyAggregated) && int64(tc.Replicas) > capacity(cd):
			t.Fatalf("target %s has %d replicas, only %d fit", tc.Name, tc.Replicas, capacity(cd))
		}
		seen[tc.Name] = true
		sum += int64(tc.Replicas)
	}
	if divided && sum != int64(r.Replicas) {
		t.Fatalf("targets sum to %d, want %d: %s", sum, r.Replicas, show(res.Targets))
	}
	for k, e := range res.NotSelected {
		if seen[e.Cluster] || byName[e.Cluster] == nil || e.Reason == "" || k > 0 && res.NotSelected[k-1].Cluster >= e.Cluster {
			t.Fatalf("bad explanation %d %+v", k, e)
		}
		seen[e.Cluster] = true
	}
	if len(seen) != len(cands) {
		t.Fatalf("%d of %d candidates are neither targets nor explained", len(cands)-len(seen), len(cands))
	}
	if name != placement.StrategyStaticWeight || !staticWeighted(r.Placement) {
		checkSpread(t, byName, r, divided, res.Targets)
	}
}

// checkSpread asserts the spread constraints on the targets, with minGroups
// capped at the replicas for Divided placements.
func checkSpread(t *testing.T, byName map[string]*Candidate, r Request, divided bool, targets []workv1alpha1.TargetCluster) {
	t.Helper()
	for _, s := range r.Placement.SpreadConstraints {
		groups := map[string]bool{}
		for _, tc := range targets {
			cd := byName[tc.Name]
			var key string
			switch s.SpreadByField {
			case policyv1alpha1.SpreadByFieldCluster:
				key = cd.Name
			case policyv1alpha1.SpreadByFieldProvider:
				key = cd.Provider
			case policyv1alpha1.SpreadByFieldRegion:
				key = cd.Provider + "/" + cd.Region
			case policyv1alpha1.SpreadByFieldZone:
				key = cd.Provider + "/" + cd.Region + "/" + cd.Zone
			default:
				key = cd.Labels[s.SpreadByLabel]
			}
			groups[key] = true
		}
		lo := int(s.MinGroups)
		if divided {
			lo = min(lo, int(r.Replicas))
		}
		if len(groups) < lo || s.MaxGroups != nil && len(groups) > int(*s.MaxGroups) {
			t.Fatalf("spread %s%s %d..%v violated: %d groups in %s", s.SpreadByField, s.SpreadByLabel, lo, s.MaxGroups, len(groups), show(targets))
		}
	}
}

// steadyFrom is the candidates as the next Steady cycle sees them after res
// was applied: targets held with their replicas, nothing else held.
func steadyFrom(cands []Candidate, res Result) []Candidate {
	next := slices.Clone(cands)
	for i := range next {
		next[i].Held, next[i].Previous = false, 0
		for _, tc := range res.Targets {
			if tc.Name == next[i].Name {
				next[i].Held, next[i].Previous = true, tc.Replicas
			}
		}
	}
	return next
}

func FuzzSchedule(f *testing.F) {
	for _, seed := range [][]byte{
		{5, 10, 0, 3, 0},
		{12, 17, 1, 1, 0x03, 1, 2, 2, 1},
		{20, 30, 0, 3, 0x07, 2, 1, 1, 2, 1, 0, 1, 2, 3, 1, 50, 7, 2, 3},
		{23, 39, 1, 4, 0x1f, 3, 3, 2, 2, 1, 1, 2, 3, 1, 3},
		{8, 9, 0, 5, 0x00, 1, 1, 1, 1, 5, 3, 2, 0},
		{15, 25, 1, 2, 0x12, 2, 0, 3, 1},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cands, r := fleetFrom(data)
		res, err := Schedule(cands, r)
		if err != nil {
			var ue *UnschedulableError
			if !errors.As(err, &ue) || ue.Constraint == "" {
				t.Fatalf("not an UnschedulableError: %v", err)
			}
		} else {
			checkResult(t, cands, r, res)
		}
		again, err2 := Schedule(cands, r)
		if !reflect.DeepEqual(res, again) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("not deterministic")
		}
		shuffled := slices.Clone(cands)
		rand.New(rand.NewPCG(uint64(len(data)), 7)).Shuffle(len(shuffled), func(i, j int) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
		})
		again, err2 = Schedule(shuffled, r)
		if !reflect.DeepEqual(res, again) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("candidate order changed the result:\n%s %v\n%s %v", show(res.Targets), err, show(again.Targets), err2)
		}
		if err != nil {
			return
		}
		steady := r
		steady.Mode = Steady
		next := steadyFrom(cands, res)
		kept, err := Schedule(next, steady)
		if err != nil || !reflect.DeepEqual(kept.Targets, res.Targets) {
			t.Fatalf("steady with unchanged input moved the placement:\nwas %s\nnow %s %v", show(res.Targets), show(kept.Targets), err)
		}
	})
}
