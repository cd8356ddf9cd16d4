package core

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// capacity is how many replicas of the workload cluster c can hold: those it
// runs now plus those that still fit. Available excludes the replicas already
// there (the framework computes it from free resources), so a Fresh
// recomputation may reuse them and a Steady scale-up adds at most Available.
// Capped at Unlimited so sums of a few thousand never overflow.
func capacity(c *Candidate) int64 {
	return min(max(c.Available, 0)+int64(max(c.Previous, 0)), Unlimited)
}

// satAdd adds capacities, saturating at Unlimited: every replica count is an
// int32, so comparisons against requests stay exact.
func satAdd(a, b int64) int64 { return min(a+b, Unlimited) }

// apportion splits total over weights by the largest remainder method
// (Hamilton): each share is floor(total*w/W), and the replicas left over go
// one each to the largest remainders, ties to the lower index (callers order
// clusters by name). The shares sum to total exactly when W > 0, and no share
// exceeds ceil(total*w/W), so weights that are capacities never overflow them
// when total <= W. Products use 128 bits: Unlimited weights times int32
// totals overflow 64.
func apportion(total int64, weights []int64) []int64 {
	shares := make([]int64, len(weights))
	// Static weights are user input: shift them all right until their sum
	// fits 64 bits. Proportions barely move and the result stays exact.
	var top int64
	for _, w := range weights {
		top = max(top, w)
	}
	shift := max(bits.Len64(uint64(top))+bits.Len(uint(len(weights)))-64, 0)
	var sum uint64
	for _, w := range weights {
		sum += uint64(max(w, 0)) >> shift
	}
	if total <= 0 || sum == 0 {
		return shares
	}
	rems := make([]uint64, len(weights))
	left := total
	for i, w := range weights {
		hi, lo := bits.Mul64(uint64(total), uint64(max(w, 0))>>shift)
		q, r := bits.Div64(hi, lo, sum) // hi < sum since total*w/sum <= total
		shares[i], rems[i] = int64(q), r
		left -= int64(q)
	}
	if left == 0 {
		return shares
	}
	// Few replicas are usually left against thousands of clusters: pick
	// the largest remainders by scanning rather than sorting them all.
	if left <= 8 {
		for ; left > 0; left-- {
			best := 0
			for i, r := range rems {
				if r > rems[best] {
					best = i
				}
			}
			shares[best]++
			rems[best] = 0
		}
		return shares
	}
	idx := make([]int, 0, len(weights))
	for i := range weights {
		if rems[i] > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(rems[b], rems[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, i := range idx[:left] {
		shares[i]++
	}
	return shares
}

// fill hands out total to clusters in the given order, each up to its limit:
// the packing of Aggregated. It fails when the limits are too small.
func fill(total int64, order []int, limits []int64) ([]int64, error) {
	shares := make([]int64, len(limits))
	for _, i := range order {
		if total == 0 {
			break
		}
		shares[i] = min(total, max(limits[i], 0))
		total -= shares[i]
	}
	if total > 0 {
		return nil, fmt.Errorf("%d replicas do not fit", total)
	}
	return shares, nil
}

// divider is the part of a Divided strategy that differs between strategies.
// Both functions get the clusters sorted by name.
type divider struct {
	// fresh places total replicas from scratch.
	fresh func(cs []*Candidate, total int64) ([]int64, error)
	// more places extra replicas on top of the previous ones (Steady scale
	// up), within what still fits (Available) for capacity strategies.
	more func(cs []*Candidate, extra int64) ([]int64, error)
}

// divide runs the steps every Divided strategy shares. Fresh, or Steady with
// nothing placed yet, calls fresh. Otherwise Steady keeps what exists: the
// previous replicas of the selected clusters stay as they are when the total
// is unchanged, grow by more when it rises, and shrink in proportion to them
// (largest remainder) when it falls. Replicas of held clusters that were not
// selected count as missing and are placed again by more. The result is
// sorted by name without zero-replica targets.
func divide(name string, selected []Candidate, req Request, d divider) ([]workv1alpha1.TargetCluster, error) {
	cs := make([]*Candidate, len(selected))
	for i := range selected {
		cs[i] = &selected[i]
	}
	sortIfNeeded(cs, func(a, b *Candidate) int { return cmp.Compare(a.Name, b.Name) })
	total := int64(max(req.Replicas, 0))
	prev := make([]int64, len(cs))
	var placed int64
	for i := range cs {
		prev[i] = int64(max(cs[i].Previous, 0))
		placed += prev[i]
	}
	var shares []int64
	var err error
	switch {
	case req.Mode == Fresh || placed == 0:
		shares, err = d.fresh(cs, total)
	case placed == total:
		shares = prev
	case placed > total:
		shares = apportion(total, prev)
	default:
		shares, err = d.more(cs, total-placed)
		for i := range shares {
			shares[i] += prev[i]
		}
	}
	if err != nil {
		return nil, &UnschedulableError{Constraint: "replicas",
			Message: fmt.Sprintf("replicas: %s: %d requested: %v", name, total, err)}
	}
	targets := make([]workv1alpha1.TargetCluster, 0, len(cs))
	for i := range cs {
		if shares[i] > 0 {
			targets = append(targets, workv1alpha1.TargetCluster{Name: cs[i].Name, Replicas: int32(shares[i])})
		}
	}
	return targets, nil
}
