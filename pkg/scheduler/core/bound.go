package core

import (
	"cmp"
	"slices"
)

// takesAll reports whether every member is selected without a search: no
// capacity to stop at and no maximum that binds.
func (p *plan) takesAll() bool {
	if p.need > 0 || p.clusterMax < len(p.members) {
		return false
	}
	for i := range p.rules {
		if p.rules[i].max < len(p.rules[i].groups.groups) {
			return false
		}
	}
	return true
}

// limits are the set sizes to try. Aggregated tries the smallest sizes that
// could work first, from a lower bound (the minimums, and the fewest
// clusters whose capacity fits the replicas after the held ones), so it
// packs onto as few clusters as the constraints allow; after fewestTries it
// accepts any size. Others try the cluster maximum only.
func (p *plan) limits(sticky int) []int {
	if !p.shape.Fewest {
		return []int{p.clusterMax}
	}
	lo := p.clusterMin
	for i := range p.rules {
		lo = max(lo, p.rules[i].min)
	}
	need := p.need
	rest := make([]int64, 0, len(p.members))
	for _, m := range p.members {
		if p.req.Mode == Steady && p.cands[m].Held {
			need -= p.caps[m]
		} else {
			rest = append(rest, p.caps[m])
		}
	}
	lo = max(lo, sticky+coverCount(rest, need))
	var ls []int
	for l := lo; l < lo+fewestTries && l < p.clusterMax; l++ {
		ls = append(ls, l)
	}
	return append(ls, p.clusterMax)
}

// capBounds bound the capacity the undecided clusters can still add to the
// set, so capacity strategies prune early instead of discovering late that
// the replicas do not fit.
type capBounds struct {
	// top[k] is the sum of the k largest member capacities, for k up to the
	// cluster maximum (nil when that does not bound the set).
	top []int64
	// order[r] lists the groups of rule r by their largest member capacity,
	// descending; most[r][g] is that capacity.
	order [][]int32
	most  [][]int64
}

func newCapBounds(p *plan) *capBounds {
	b := &capBounds{top: p.topCaps, order: make([][]int32, len(p.rules)), most: make([][]int64, len(p.rules))}
	for r := range p.rules {
		g := p.rules[r].groups
		most := make([]int64, len(g.groups))
		for _, m := range p.members {
			most[g.of[m]] = max(most[g.of[m]], p.caps[m])
		}
		order := make([]int32, len(most))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(most[b], most[a]) })
		b.order[r], b.most[r] = order, most
	}
	return b
}

// boundScan caps how many groups bound examines per rule: past it, every
// slot still unfilled is bounded by the largest cluster of the next group
// in order, which is no smaller than any group after it. With thousands of
// label values this keeps a step O(rules) instead of O(groups).
const boundScan = 64

// bound is an upper bound on the capacity that room more clusters, out of
// the undecided ones, can add: at most all of it, at most the room largest
// capacities, and, when a rule needs a new group for each of the slots
// left, at most the largest cluster of each of the best groups not opened.
func (b *capBounds) bound(s *search, slots, room, undecided int) int64 {
	bound := s.capLeft
	if room < undecided && b.top != nil {
		bound = min(bound, b.top[room])
	}
	for r := range s.p.rules {
		if s.p.rules[r].min-s.open[r] < slots {
			continue
		}
		var sum int64
		k := 0
		for j, g := range b.order[r] {
			if k == slots {
				break
			}
			if j == boundScan {
				sum += int64(slots-k) * b.most[r][g]
				break
			}
			if s.count[r][g] == 0 && s.left[r][g] > 0 {
				sum += b.most[r][g]
				k++
			}
		}
		bound = min(bound, sum)
	}
	return bound
}

// coverCount returns how few of the largest vals reach need, or
// len(vals)+1 when all of them together do not. It reorders vals.
func coverCount(vals []int64, need int64) int {
	if need <= 0 {
		return 0
	}
	slices.SortFunc(vals, func(a, b int64) int { return cmp.Compare(b, a) })
	var sum int64
	for n, v := range vals {
		if sum = satAdd(sum, v); sum >= need {
			return n + 1
		}
	}
	return len(vals) + 1
}
