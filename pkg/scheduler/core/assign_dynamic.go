package core

import (
	"fmt"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/apportion"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// dynamicWeight divides replicas in proportion to how many fit on each
// cluster, by Karmada's method (Webster, see Webster), which never gives a
// cluster more than the weight it divides by when the weights hold the
// replicas: no cluster gets more than fits.
type dynamicWeight struct{}

func (dynamicWeight) Name() string { return placement.StrategyDynamicWeight }

// Shape: divided, within capacity.
func (dynamicWeight) Shape() Shape { return Shape{Divided: true, Capacity: true} }

// Assign weighs each cluster by its capacity (Available + Previous) from
// scratch, by Available alone for the replicas a Steady scale-up adds, and
// by the previous replicas for a Steady scale-down.
func (dynamicWeight) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	return divide(placement.StrategyDynamicWeight, selected, req, divider{
		fresh: func(cs []*Candidate, total int64, ties apportion.Ties) ([]int64, error) {
			return proportional(total, rooms(cs, capacity), ties)
		},
		more: func(cs []*Candidate, extra int64, ties apportion.Ties) ([]int64, error) {
			return proportional(extra, rooms(cs, available), ties)
		},
		less: inProportion,
	})
}

// proportional divides total by the rooms, failing when they are too small
// in sum.
func proportional(total int64, room []int64, ties apportion.Ties) ([]int64, error) {
	var sum int64
	for _, r := range room {
		sum = satAdd(sum, r)
	}
	if sum < total {
		return nil, fmt.Errorf("the selected clusters fit %d", sum)
	}
	return apportion.Webster(total, room, ties), nil
}

// available is what still fits on c beside the replicas already there.
func available(c *Candidate) int64 { return min(max(c.Available, 0), Unlimited) }

// rooms evaluates room for every cluster.
func rooms(cs []*Candidate, room func(*Candidate) int64) []int64 {
	l := make([]int64, len(cs))
	for i := range cs {
		l[i] = room(cs[i])
	}
	return l
}
