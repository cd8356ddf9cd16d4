package core

import (
	"cmp"
	"fmt"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/apportion"
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

// divider is the part of a Divided strategy that differs between strategies.
// Every function gets the clusters sorted by name and the tie rule.
type divider struct {
	// fresh places total replicas from scratch.
	fresh func(cs []*Candidate, total int64, ties apportion.Ties) ([]int64, error)
	// more places extra replicas on top of the previous ones (Steady scale
	// up), within what still fits (Available) for capacity strategies.
	more func(cs []*Candidate, extra int64, ties apportion.Ties) ([]int64, error)
	// less shrinks the previous replicas prev to total (Steady scale down).
	less func(cs []*Candidate, prev []int64, total int64, ties apportion.Ties) []int64
}

// divide runs the steps every Divided strategy shares, as Karmada's
// assignment does. Fresh, or Steady with nothing placed yet, calls fresh.
// Otherwise Steady keeps what exists: the previous replicas of the selected
// clusters stay as they are when the total is unchanged, grow by more when
// it rises, and shrink by less when it falls. Replicas of held clusters
// that were not selected count as missing and are placed again by more.
// The result is sorted by name without zero-replica targets.
func divide(name string, selected []Candidate, req Request, d divider) ([]workv1alpha1.TargetCluster, error) {
	cs := byName(selected)
	ties := apportion.TiesFor(req.TieSeed)
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
		shares, err = d.fresh(cs, total, ties)
	case placed == total:
		shares = prev
	case placed > total:
		shares = d.less(cs, prev, total, ties)
	default:
		shares, err = d.more(cs, total-placed, ties)
		for i := range shares {
			shares[i] += prev[i]
		}
	}
	if err != nil {
		return nil, &UnschedulableError{Constraint: "replicas",
			Message: fmt.Sprintf("replicas: %s: %d requested: %v", name, total, err)}
	}
	return targetsOf(cs, shares), nil
}

// byName points at the selected candidates in name order.
func byName(selected []Candidate) []*Candidate {
	cs := make([]*Candidate, len(selected))
	for i := range selected {
		cs[i] = &selected[i]
	}
	sortIfNeeded(cs, func(a, b *Candidate) int { return cmp.Compare(a.Name, b.Name) })
	return cs
}

// targetsOf turns shares into targets, leaving out clusters given none.
func targetsOf(cs []*Candidate, shares []int64) []workv1alpha1.TargetCluster {
	targets := make([]workv1alpha1.TargetCluster, 0, len(cs))
	for i := range cs {
		if shares[i] > 0 {
			targets = append(targets, workv1alpha1.TargetCluster{Name: cs[i].Name, Replicas: int32(shares[i])})
		}
	}
	return targets
}

// inProportion shrinks prev to total in proportion to it (Webster): the
// scale-down of dynamic weights.
func inProportion(_ []*Candidate, prev []int64, total int64, ties apportion.Ties) []int64 {
	return apportion.Webster(total, prev, ties)
}
