package core

import (
	"fmt"
	"math"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// noMax stands for an unset maxGroups.
const noMax = math.MaxInt32

// Why a candidate is not a member of the selection problem.
const (
	member uint8 = iota
	droppedStatic
	droppedNoRoom
)

// rule is one provider, region, zone or label spread constraint as selection
// enforces it. The cluster constraint is kept apart (plan.clusterMin/Max):
// it bounds the size of the set rather than a grouping.
type rule struct {
	// name is how errors and explanations cite it: spreadConstraints[region].
	name string
	// field is the spread field, "" for a label rule.
	field policyv1alpha1.SpreadFieldValue
	// label is the label key of a label rule.
	label string
	// min and max are the effective bounds (min capped at the replicas for
	// Divided strategies; max noMax when unset).
	min, max int
	groups   *grouping
}

// noun names n groups of the rule: "1 region", "3 zones", "2 values of
// label \"rack\"".
func (r *rule) noun(n int) string {
	s := string(r.field)
	if r.field == "" {
		s = "value"
	}
	if n != 1 {
		s += "s"
	}
	if r.field == "" {
		return fmt.Sprintf("%d %s of label %q", n, s, r.label)
	}
	return fmt.Sprintf("%d %s", n, s)
}

// level orders the topology fields from coarse to fine: a set of clusters
// spans no more providers than regions, regions than zones.
func (r *rule) level() int {
	switch r.field {
	case policyv1alpha1.SpreadByFieldProvider:
		return 1
	case policyv1alpha1.SpreadByFieldRegion:
		return 2
	case policyv1alpha1.SpreadByFieldZone:
		return 3
	}
	return 0
}

// plan is the selection problem: which candidates may be chosen, under which
// rules, and what the chosen set must achieve.
type plan struct {
	cands []Candidate
	req   Request
	shape Shape
	// caps is the capacity of every candidate (by candidate index).
	caps []int64
	// members are the indices of the candidates selection may choose, in
	// input order; dropped says why the others may not.
	members []int32
	dropped []uint8
	rules   []rule
	// clusterMin and clusterMax bound the number of clusters chosen;
	// clusterWhy names the bound on the maximum for messages.
	clusterMin, clusterMax int
	clusterWhy             string
	// need is the replicas the chosen clusters must fit (capacity
	// strategies), 0 otherwise; topCaps[k] is the sum of the k largest
	// member capacities, up to clusterMax, when that is below the members.
	need    int64
	topCaps []int64
	// spread is true when spread constraints apply to a Divided placement:
	// then every chosen cluster must receive a replica.
	spread bool
	// static is true for a static weight list (spread ignored).
	static bool
}

// newPlan derives the selection problem and rejects, with the constraint to
// blame, requests that no set of clusters can meet.
func newPlan(cands []Candidate, req Request, strategy string, shape Shape) (*plan, error) {
	replicas := int(max(req.Replicas, 0))
	p := &plan{cands: cands, req: req, shape: shape, caps: make([]int64, len(cands)),
		dropped: make([]uint8, len(cands)), clusterMin: 1, clusterMax: noMax,
		static: strategy == placement.StrategyStaticWeight && staticWeighted(req.Placement)}
	if shape.Capacity {
		p.need = int64(replicas)
	}
	weighted := false
	for i := range cands {
		p.caps[i] = capacity(&cands[i])
		weighted = weighted || cands[i].StaticWeight > 0
	}
	p.members = make([]int32, 0, len(cands))
	for i := range cands {
		switch {
		case p.static && weighted && cands[i].StaticWeight <= 0:
			p.dropped[i] = droppedStatic
		case shape.Capacity && p.caps[i] == 0:
			p.dropped[i] = droppedNoRoom
		default:
			p.members = append(p.members, int32(i))
		}
	}
	if len(p.members) == 0 {
		if len(cands) > 0 && shape.Capacity {
			return nil, unschedulable("replicas", "replicas: %d requested, feasible clusters fit 0", replicas)
		}
		return nil, unschedulable("clusters", "clusters: no feasible clusters")
	}
	if !p.static && req.Placement != nil {
		if err := p.addRules(req.Placement.SpreadConstraints); err != nil {
			return nil, err
		}
	}
	if shape.Divided && !p.static {
		if replicas < p.clusterMax {
			p.clusterMax, p.clusterWhy = replicas, fmt.Sprintf("%d replicas go to at most %d clusters", replicas, replicas)
		}
		p.clusterMin = min(p.clusterMin, replicas)
		for i := range p.rules {
			p.rules[i].min = min(p.rules[i].min, replicas)
		}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// addRules turns spread constraints into rules. Two constraints on one key
// (which the API forbids) tighten each other rather than fail.
func (p *plan) addRules(scs []policyv1alpha1.SpreadConstraint) error {
	p.spread = p.shape.Divided && len(scs) > 0
	depth := 0
	for _, sc := range scs {
		depth = max(depth, (&rule{field: sc.SpreadByField}).level())
	}
	topo := newTopology(p.cands, p.members, p.caps, depth)
	for _, sc := range scs {
		lo, hi := int(sc.MinGroups), noMax
		if sc.MaxGroups != nil {
			hi = int(*sc.MaxGroups)
		}
		name := fmt.Sprintf("spreadConstraints[%s]", sc.SpreadByField)
		if sc.SpreadByField == "" {
			name = fmt.Sprintf("spreadConstraints[label:%s]", sc.SpreadByLabel)
		}
		if lo > hi {
			return unschedulable(name, "%s: minGroups %d is more than maxGroups %d", name, lo, hi)
		}
		switch sc.SpreadByField {
		case policyv1alpha1.SpreadByFieldCluster:
			p.clusterMin = max(p.clusterMin, lo)
			if hi < p.clusterMax {
				p.clusterMax, p.clusterWhy = hi, fmt.Sprintf("%s.maxGroups=%d", name, hi)
			}
			continue
		case "":
			if sc.SpreadByLabel == "" {
				continue
			}
		}
		r := rule{name: name, field: sc.SpreadByField, label: sc.SpreadByLabel, min: lo, max: hi}
		if r.field == "" {
			r.groups = topo.label(r.label)
		} else {
			r.groups = topo.field(r.field)
		}
		if j := p.ruleFor(&r); j >= 0 {
			p.rules[j].min, p.rules[j].max = max(p.rules[j].min, lo), min(p.rules[j].max, hi)
			continue
		}
		p.rules = append(p.rules, r)
	}
	return nil
}

// ruleFor returns the index of the rule on the same key as r, or -1.
func (p *plan) ruleFor(r *rule) int {
	for j := range p.rules {
		if p.rules[j].field == r.field && p.rules[j].label == r.label {
			return j
		}
	}
	return -1
}

// check fails fast on what no search can fix: too few groups, bounds that
// contradict each other, and capacity that does not fit the replicas under
// a maximum. Each check names the constraint to blame.
func (p *plan) check() error {
	if n := len(p.members); n < p.clusterMin {
		return unschedulable("spreadConstraints[cluster].minGroups",
			"spreadConstraints[cluster].minGroups: need at least %d clusters, %d available", p.clusterMin, n)
	}
	for i := range p.rules {
		r := &p.rules[i]
		if n := len(r.groups.groups); n < r.min {
			return unschedulable(r.name+".minGroups", "%s.minGroups: need at least %s, %d available", r.name, r.noun(r.min), n)
		}
		if r.min > p.clusterMax {
			return unschedulable(r.name+".minGroups", "%s.minGroups: need at least %s, but %s allows only %d clusters",
				r.name, r.noun(r.min), p.clusterWhy, p.clusterMax)
		}
		for j := range p.rules {
			f := &p.rules[j]
			if r.level() > 0 && f.level() >= r.level() && r.min > f.max {
				return unschedulable(r.name+".minGroups", "%s.minGroups: need at least %s, but %s.maxGroups allows only %s",
					r.name, r.noun(r.min), f.name, f.noun(f.max))
			}
		}
	}
	if p.need == 0 {
		return nil
	}
	caps := make([]int64, len(p.members))
	var fit int64
	for k, m := range p.members {
		caps[k] = p.caps[m]
		fit = satAdd(fit, caps[k])
	}
	if fit < p.need {
		return unschedulable("replicas", "replicas: %d requested, feasible clusters fit %d", p.need, fit)
	}
	if p.clusterMax < len(caps) {
		p.topCaps = topPrefix(caps, p.clusterMax)
		if fit := p.topCaps[p.clusterMax]; fit < p.need {
			return unschedulable("spreadConstraints[cluster].maxGroups",
				"spreadConstraints[cluster].maxGroups: %d replicas do not fit in %d clusters (the best %d fit %d)",
				p.need, p.clusterMax, p.clusterMax, fit)
		}
	}
	for i := range p.rules {
		r := &p.rules[i]
		gcaps := make([]int64, len(r.groups.groups))
		for g := range r.groups.groups {
			gcaps[g] = r.groups.groups[g].AvailableReplicas
		}
		top := topPrefix(gcaps, r.max)
		if fit := top[len(top)-1]; fit < p.need {
			return unschedulable(r.name+".maxGroups", "%s.maxGroups: %d replicas do not fit in %s (the largest fit %d)",
				r.name, p.need, r.noun(r.max), fit)
		}
	}
	return nil
}

// unschedulable builds the error Schedule returns when no placement exists.
func unschedulable(constraint, format string, args ...any) error {
	return &UnschedulableError{Constraint: constraint, Message: fmt.Sprintf(format, args...)}
}
