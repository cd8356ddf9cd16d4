package core

import (
	"cmp"
	"fmt"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/apportion"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// aggregated keeps replicas on as few clusters as possible: selection
// already chose the fewest clusters the constraints allow, and Assign, as
// Karmada does, takes the clusters that hold the most one after another
// until they hold the replicas, then divides among those in proportion
// (Webster) to what they hold. So a scale-down ends on as few of the
// clusters in place as hold the new total, moving no replica.
type aggregated struct{}

func (aggregated) Name() string { return placement.StrategyAggregated }

// Shape: divided, within capacity, fewest clusters.
func (aggregated) Shape() Shape { return Shape{Divided: true, Capacity: true, Fewest: true} }

// Assign, by case:
//   - from scratch: by capacity (Available + Previous), largest first;
//   - Steady scale-up: the added replicas by Available, clusters already
//     holding replicas first, then largest Available first;
//   - Steady scale-down: by the previous replicas, largest first.
//
// Equal rooms go by name.
func (aggregated) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	return divide(placement.StrategyAggregated, selected, req, divider{
		fresh: func(cs []*Candidate, total int64, ties apportion.Ties) ([]int64, error) {
			return pack(total, rooms(cs, capacity), nil, ties)
		},
		more: func(cs []*Candidate, extra int64, ties apportion.Ties) ([]int64, error) {
			first := make([]bool, len(cs))
			for i := range cs {
				first[i] = cs[i].Previous > 0
			}
			return pack(extra, rooms(cs, available), first, ties)
		},
		less: func(_ []*Candidate, prev []int64, total int64, ties apportion.Ties) []int64 {
			shares, _ := pack(total, prev, nil, ties) // sum(prev) > total: it fits
			return shares
		},
	})
}

// pack takes clusters in order (first ones first, then larger room, then
// index, which is name order) until their rooms hold total, and divides
// total over those by their rooms. It fails when all rooms together are
// too small.
func pack(total int64, room []int64, first []bool, ties apportion.Ties) ([]int64, error) {
	order := make([]int, len(room))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if first != nil && first[a] != first[b] {
			if first[a] {
				return -1
			}
			return 1
		}
		return cmp.Compare(room[b], room[a])
	})
	taken := make([]int64, len(room))
	var sum int64
	for _, i := range order {
		if sum >= total {
			break
		}
		taken[i] = room[i]
		sum = satAdd(sum, room[i])
	}
	if sum < total {
		return nil, fmt.Errorf("the selected clusters fit %d", sum)
	}
	return apportion.Webster(total, taken, ties), nil
}
