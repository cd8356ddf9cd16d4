package core

import "fmt"

// Search bounds. One step decides or undoes one cluster, in O(rules); a
// selection gives up after budgetBase + budgetPerMember*members steps in
// all, so it costs O(members * rules) whatever the constraints.
const (
	budgetBase      = 8192
	budgetPerMember = 8
	// fewestTries is how many set sizes Aggregated tries above its lower
	// bound, with half the budget between them, before it settles for any
	// size the constraints allow.
	fewestTries = 4
)

// search chooses clusters by a depth-first walk over the members in order
// (best first): each cluster is taken if it is wanted and the partial set can
// still be completed, otherwise left out. When the partial set can no longer
// be completed it backtracks to the most recent cluster taken and leaves it
// out instead, so the first set found is the lexicographically best one in
// the order: the best clusters, and through them the best groups.
//
// "Can still be completed" is checked in O(rules) per step with necessary
// conditions: every maxGroups holds; each rule's missing groups fit in the
// clusters still allowed and exist among the clusters not yet decided; and
// for capacity strategies the clusters still allowed could fit the missing
// replicas (see capBounds). These prune all but the combinations where
// several constraints interact, which the budget bounds.
//
// Capacity strategies stop as soon as the set fits the replicas and meets
// every minimum (a cluster is wanted only if it helps with one of those, or
// is held in Steady mode); the others take every cluster the constraints
// allow, up to the cluster maximum.
type search struct {
	p   *plan
	ord *order
	// limit is the most clusters this attempt may choose.
	limit int
	// n is the number of members; sticky is the number of held members in
	// Steady mode, which the order puts first.
	n, sticky int
	// bounds bound the capacity still to come, for capacity strategies.
	bounds *capBounds
	// budget and steps count this attempt; spent counts all attempts.
	budget, steps, spent int

	stack   []step
	chosen  int
	capSel  int64
	capLeft int64
	// count[r][g] is how many chosen clusters are in group g of rule r;
	// left[r][g] how many of its clusters are still undecided.
	count, left [][]int32
	// open[r] counts groups with a chosen cluster, openable[r] groups
	// without one that still have undecided clusters. Capacities are at
	// most Unlimited (2^40), so capSel and capLeft never overflow.
	open, openable []int
}

// step is one decision: candidate idx taken (in) or left out.
type step struct {
	idx int32
	in  bool
}

// choose returns the selected members (candidate indices).
func (p *plan) choose() ([]int32, error) {
	if p.takesAll() {
		return p.members, nil
	}
	s := &search{p: p, ord: newOrder(p), n: len(p.members),
		count: make([][]int32, len(p.rules)), left: make([][]int32, len(p.rules)),
		open: make([]int, len(p.rules)), openable: make([]int, len(p.rules))}
	for r := range p.rules {
		s.count[r] = make([]int32, len(p.rules[r].groups.groups))
		s.left[r] = make([]int32, len(p.rules[r].groups.groups))
	}
	for _, m := range p.members {
		if p.req.Mode == Steady && p.cands[m].Held {
			s.sticky++
		}
	}
	if p.need > 0 {
		s.bounds = newCapBounds(p)
	}
	total := budgetBase + budgetPerMember*len(p.members)
	limits := p.limits(s.sticky)
	for k, limit := range limits {
		budget := total / (2 * fewestTries)
		if k == len(limits)-1 {
			budget = total - s.spent
		}
		if s.run(limit, budget) {
			return s.selected(), nil
		}
	}
	what := "every spread constraint"
	if p.need > 0 {
		what += fmt.Sprintf(" and fits %d replicas", p.need)
	}
	if s.steps >= s.budget {
		return nil, unschedulable("spreadConstraints", "spreadConstraints: found no set of clusters that meets %s (search stopped after %d steps)", what, s.spent)
	}
	return nil, unschedulable("spreadConstraints", "spreadConstraints: no set of clusters meets %s", what)
}

// run searches for a set of at most limit clusters within budget steps.
func (s *search) run(limit, budget int) bool {
	s.reset(limit, budget)
	defer func() { s.spent += s.steps }()
	if !s.viable() {
		return false
	}
	for !s.complete() {
		if s.steps >= s.budget {
			return false
		}
		s.steps++
		pos := len(s.stack)
		if pos == s.n {
			if !s.backtrack() {
				return false
			}
			continue
		}
		i := s.ord.at(pos)
		if s.wanted(pos, i) && s.include(i) {
			continue
		}
		s.decide(i, false)
		if !s.viable() && !s.backtrack() {
			return false
		}
	}
	return true
}

func (s *search) reset(limit, budget int) {
	s.limit, s.budget, s.steps, s.stack, s.chosen, s.capSel, s.capLeft = limit, budget, 0, s.stack[:0], 0, 0, 0
	for _, m := range s.p.members {
		s.capLeft += s.p.caps[m]
	}
	for r := range s.p.rules {
		gs := s.p.rules[r].groups.groups
		for g := range gs {
			s.count[r][g], s.left[r][g] = 0, gs[g].Size
		}
		s.open[r], s.openable[r] = 0, len(gs)
	}
}

// complete reports whether the set is finished: every minimum met and the
// replicas fit; then capacity strategies stop once no held cluster is left
// to keep, the others once no cluster may be added.
func (s *search) complete() bool {
	if s.chosen < s.p.clusterMin || s.capSel < s.p.need {
		return false
	}
	for r := range s.p.rules {
		if s.open[r] < s.p.rules[r].min {
			return false
		}
	}
	if s.p.shape.Capacity {
		return len(s.stack) >= s.sticky
	}
	return len(s.stack) == s.n || s.chosen == s.limit
}

// wanted reports whether the member at pos would help: always for
// strategies that take every cluster allowed and for held clusters; for
// capacity strategies only while the replicas do not fit or it brings a
// group or cluster some minimum still lacks.
func (s *search) wanted(pos int, i int32) bool {
	if !s.p.shape.Capacity || pos < s.sticky || s.capSel < s.p.need || s.chosen < s.p.clusterMin {
		return true
	}
	for r := range s.p.rules {
		if s.open[r] < s.p.rules[r].min && s.count[r][s.p.rules[r].groups.of[i]] == 0 {
			return true
		}
	}
	return false
}

// include takes cluster i if the set can still be completed with it.
func (s *search) include(i int32) bool {
	if s.chosen >= s.limit {
		return false
	}
	for r := range s.p.rules {
		if s.count[r][s.p.rules[r].groups.of[i]] == 0 && s.open[r] >= s.p.rules[r].max {
			return false
		}
	}
	s.decide(i, true)
	if s.viable() {
		return true
	}
	s.undo()
	return false
}

// viable checks the necessary conditions for completing the set.
func (s *search) viable() bool {
	slots := s.limit - s.chosen
	undecided := s.n - len(s.stack)
	room := min(slots, undecided)
	if s.p.clusterMin-s.chosen > room {
		return false
	}
	for r := range s.p.rules {
		if need := s.p.rules[r].min - s.open[r]; need > 0 && (need > slots || need > s.openable[r]) {
			return false
		}
	}
	return s.capSel >= s.p.need || s.capSel+s.bounds.bound(s, slots, room, undecided) >= s.p.need
}

// backtrack undoes decisions up to the most recent cluster taken and leaves
// it out instead; it fails when no such cluster is left or the budget is
// spent.
func (s *search) backtrack() bool {
	for len(s.stack) > 0 {
		if s.steps >= s.budget {
			return false
		}
		s.steps++
		if st := s.undo(); st.in {
			s.decide(st.idx, false)
			if s.viable() {
				return true
			}
		}
	}
	return false
}

func (s *search) decide(i int32, in bool) {
	s.stack = append(s.stack, step{idx: i, in: in})
	s.capLeft -= s.p.caps[i]
	if in {
		s.chosen++
		s.capSel += s.p.caps[i]
	}
	for r := range s.p.rules {
		g := s.p.rules[r].groups.of[i]
		s.left[r][g]--
		switch {
		case in:
			if s.count[r][g] == 0 {
				s.open[r]++
				s.openable[r]--
			}
			s.count[r][g]++
		case s.count[r][g] == 0 && s.left[r][g] == 0:
			s.openable[r]--
		}
	}
}

// undo reverses the last decision and returns it.
func (s *search) undo() step {
	st := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	i := st.idx
	s.capLeft += s.p.caps[i]
	if st.in {
		s.chosen--
		s.capSel -= s.p.caps[i]
	}
	for r := range s.p.rules {
		g := s.p.rules[r].groups.of[i]
		switch {
		case st.in:
			s.count[r][g]--
			if s.count[r][g] == 0 {
				s.open[r]--
				s.openable[r]++
			}
		case s.count[r][g] == 0 && s.left[r][g] == 0:
			s.openable[r]++
		}
		s.left[r][g]++
	}
	return st
}

// selected returns the clusters taken, best first.
func (s *search) selected() []int32 {
	out := make([]int32, 0, s.chosen)
	for _, st := range s.stack {
		if st.in {
			out = append(out, st.idx)
		}
	}
	return out
}
