package core

import (
	"fmt"
	"math"
)

// explainer says why a candidate did not become a target. Reasons are
// shared strings, built once per kind (once per group for maxGroups), so
// explaining thousands of left-out clusters allocates nothing per cluster.
type explainer struct {
	p   *plan
	sel []bool
	// chosen is the number of selected clusters, minScore their lowest
	// score, heldChosen whether Steady mode kept a held one.
	chosen     int
	minScore   int64
	heldChosen bool
	// used[r][g] is true when group g of rule r has a selected cluster;
	// open[r] counts those groups; groupWhy caches per-group reasons.
	used     [][]bool
	open     []int
	groupWhy [][]string
	why      [whyKinds]string
}

// Kinds of shared reasons, the index into explainer.why.
const (
	whyZero = iota
	whyLower
	whyKept
	whyPreferred
	whyFit
	whyKinds
)

func newExplainer(p *plan, chosen []int32) *explainer {
	e := &explainer{p: p, sel: make([]bool, len(p.cands)), chosen: len(chosen), minScore: math.MaxInt64,
		used: make([][]bool, len(p.rules)), open: make([]int, len(p.rules)),
		groupWhy: make([][]string, len(p.rules))}
	for r := range p.rules {
		e.used[r] = make([]bool, len(p.rules[r].groups.groups))
	}
	for _, i := range chosen {
		e.sel[i] = true
		c := &p.cands[i]
		e.minScore = min(e.minScore, c.Score)
		e.heldChosen = e.heldChosen || (p.req.Mode == Steady && c.Held)
		for r := range p.rules {
			if g := p.rules[r].groups.of[i]; !e.used[r][g] {
				e.used[r][g] = true
				e.open[r]++
			}
		}
	}
	return e
}

// reason says why candidate i is not a target.
func (e *explainer) reason(i int32) string {
	p, c := e.p, &e.p.cands[i]
	switch p.dropped[i] {
	case droppedStatic:
		return "static weight 0: no rule of the staticWeightList matches it"
	case droppedNoRoom:
		return "no room: not one replica fits"
	}
	if e.sel[i] {
		return e.once(whyZero, func() string {
			return fmt.Sprintf("selected, but its share of the %d replicas rounds down to 0", p.req.Replicas)
		})
	}
	for r := range p.rules {
		rl := &p.rules[r]
		if g := rl.groups.of[i]; e.open[r] >= rl.max && !e.used[r][g] {
			return e.group(r, g)
		}
	}
	if e.chosen >= p.clusterMax {
		switch {
		case c.Score < e.minScore:
			return e.once(whyLower, func() string {
				return fmt.Sprintf("lower score than the %d selected clusters (%s)", e.chosen, p.clusterWhy)
			})
		case e.heldChosen && !c.Held:
			return e.once(whyKept, func() string {
				return fmt.Sprintf("%s: the current clusters keep their places (Steady mode)", p.clusterWhy)
			})
		}
		return e.once(whyPreferred, func() string {
			return fmt.Sprintf("%s: the %d selected clusters were preferred (as high a score, or needed for the spread constraints or the replicas)",
				p.clusterWhy, e.chosen)
		})
	}
	if p.need > 0 {
		return e.once(whyFit, func() string {
			s := fmt.Sprintf("not needed: the selected clusters already fit all %d replicas", p.need)
			if len(p.rules) > 0 || p.clusterMin > 1 {
				s += " and meet the spread constraints"
			}
			return s
		})
	}
	return "not needed: other clusters meet the spread constraints"
}

// group is the reason for a cluster whose group a full maxGroups left out.
func (e *explainer) group(r int, g int32) string {
	if e.groupWhy[r] == nil {
		e.groupWhy[r] = make([]string, len(e.p.rules[r].groups.groups))
	}
	if s := e.groupWhy[r][g]; s != "" {
		return s
	}
	rl := &e.p.rules[r]
	noun := string(rl.field)
	if rl.field == "" {
		noun = fmt.Sprintf("value of label %q", rl.label)
	}
	s := fmt.Sprintf("%s.maxGroups=%d: its %s %q is not one of the %d selected", rl.name, rl.max, noun, rl.groups.groups[g].Name, e.open[r])
	e.groupWhy[r][g] = s
	return s
}

// once builds a shared reason the first time it is asked for.
func (e *explainer) once(kind int, build func() string) string {
	if e.why[kind] == "" {
		e.why[kind] = build()
	}
	return e.why[kind]
}
