package core

import (
	"fmt"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func init() { Register(dynamicWeight{}) }

// dynamicWeight divides replicas in proportion to how many fit on each
// cluster. Proportional shares never exceed the weight they are
// proportional to (see apportion), so no cluster gets more than fits.
type dynamicWeight struct{}

func (dynamicWeight) Name() string { return StrategyDynamicWeight }

// Shape: divided, within capacity.
func (dynamicWeight) Shape() Shape { return Shape{Divided: true, Capacity: true} }

// Assign weighs each cluster by its capacity (Available + Previous) from
// scratch, and by Available alone for the replicas a Steady scale-up adds.
func (dynamicWeight) Assign(selected []Candidate, req Request) ([]workv1alpha1.TargetCluster, error) {
	return divide(StrategyDynamicWeight, selected, req, divider{
		fresh: func(cs []*Candidate, total int64) ([]int64, error) {
			return proportional(total, cs, capacity)
		},
		more: func(cs []*Candidate, extra int64) ([]int64, error) {
			return proportional(extra, cs, func(c *Candidate) int64 { return max(c.Available, 0) })
		},
	})
}

// proportional apportions total by room(c), failing when the rooms are too
// small in sum.
func proportional(total int64, cs []*Candidate, room func(*Candidate) int64) ([]int64, error) {
	w := make([]int64, len(cs))
	var sum int64
	for i := range cs {
		w[i] = min(room(cs[i]), Unlimited)
		sum = satAdd(sum, w[i])
	}
	if sum < total {
		return nil, fmt.Errorf("the selected clusters fit %d", sum)
	}
	return apportion(total, w), nil
}
