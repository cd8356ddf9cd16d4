package core

import (
	"cmp"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func init() { Register(aggregated{}) }

// aggregated packs replicas onto as few clusters as possible: selection
// already chose the fewest clusters the constraints allow, and Assign fills
// them one after another, each up to what fits.
type aggregated struct{}

func (aggregated) Name() string { return StrategyAggregated }

// Shape: divided, within capacity, fewest clusters.
func (aggregated) Shape() Shape { return Shape{Divided: true, Capacity: true, Fewest: true} }

// Assign fills clusters in preference order: in Steady mode held clusters
// first (they run the workload already), then higher score, then more
// room, then name. From scratch each takes up to its capacity; a Steady
// scale-up adds up to Available on top of the previous replicas.
func (aggregated) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	return divide(StrategyAggregated, selected, req, divider{
		fresh: func(cs []*Candidate, total int64) ([]int64, error) {
			return fill(total, packOrder(cs, req.Mode), limits(cs, capacity))
		},
		more: func(cs []*Candidate, extra int64) ([]int64, error) {
			return fill(extra, packOrder(cs, req.Mode), limits(cs, func(c *Candidate) int64 { return max(c.Available, 0) }))
		},
	})
}

// packOrder is the order in which aggregated fills clusters.
func packOrder(cs []*Candidate, mode Mode) []int {
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ca, cb := cs[a], cs[b]
		if mode == Steady && ca.Held != cb.Held {
			if ca.Held {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(cb.Score, ca.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(capacity(cb), capacity(ca)); c != 0 {
			return c
		}
		return cmp.Compare(ca.Name, cb.Name)
	})
	return order
}

// limits evaluates room for every cluster.
func limits(cs []*Candidate, room func(*Candidate) int64) []int64 {
	l := make([]int64, len(cs))
	for i := range cs {
		l[i] = room(cs[i])
	}
	return l
}
