package core

import (
	"cmp"
	"fmt"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// Schedule selects clusters among cands for req and assigns the replicas to
// them with the strategy the placement names (see StrategyName). It returns
// an *UnschedulableError naming the constraint that cannot be met when no
// placement exists. cands are read-only; names must be unique. Candidates
// of overflow tiers (Tier > 0) take replicas only once the tiers before
// them are full (see scheduleTiers).
func Schedule(cands []Candidate, req Request) (Result, error) {
	if tiered(cands, req) {
		return scheduleTiers(cands, req)
	}
	return scheduleOne(cands, req)
}

// scheduleOne schedules on cands as one tier.
func scheduleOne(cands []Candidate, req Request) (Result, error) {
	name := placement.StrategyName(req.Placement, req.Replicas)
	strategy, ok := Lookup(name)
	if !ok {
		return Result{}, fmt.Errorf("core: no strategy %q in the table", name)
	}
	p, err := newPlan(cands, req, name, shapeOf(strategy))
	if err != nil {
		return Result{}, err
	}
	chosen, err := p.choose()
	if err != nil {
		return Result{}, err
	}
	selected := p.candidatesOf(chosen)
	targets, err := strategy.Assign(selected, req)
	if err != nil {
		return Result{}, err
	}
	if p.shape.Divided {
		targets = slices.DeleteFunc(targets, func(t workv1alpha1.TargetCluster) bool { return t.Replicas == 0 })
	}
	sortIfNeeded(targets, func(a, b workv1alpha1.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	res, err := p.finish(targets, chosen)
	if err != nil {
		return Result{}, fmt.Errorf("core: strategy %s: %w", name, err)
	}
	return res, nil
}

// finish checks the strategy's targets (it may be a plugin), gives every
// selected cluster a replica where spread constraints require it, checks the
// constraints on the clusters that actually receive replicas, and explains
// every candidate left out. targets are sorted by name.
func (p *plan) finish(targets []workv1alpha1.TargetCluster, chosen []int32) (Result, error) {
	byName := func(a, b int32) int { return cmp.Compare(p.cands[a].Name, p.cands[b].Name) }
	selected := slices.Clone(chosen)
	sortIfNeeded(selected, byName)
	at, err := p.locate(targets, selected)
	if err != nil {
		return Result{}, err
	}
	for k := range targets {
		if err := p.verifyTarget(at[k], &targets[k]); err != nil {
			return Result{}, err
		}
	}
	if !p.shape.Divided && len(targets) != len(chosen) {
		return Result{}, fmt.Errorf("%d targets for %d selected clusters", len(targets), len(chosen))
	}
	if p.spread && len(targets) < len(chosen) {
		targets = giveEachOne(targets, p.cands, selected)
		if at, err = p.locate(targets, selected); err != nil {
			return Result{}, err
		}
	}
	res := Result{Targets: targets}
	if n := len(p.cands) - len(targets); n > 0 {
		isTarget := make([]bool, len(p.cands))
		for _, i := range at {
			isTarget[i] = true
		}
		all := make([]int32, len(p.cands))
		for i := range all {
			all[i] = int32(i)
		}
		sortIfNeeded(all, byName)
		e := newExplainer(p, chosen)
		res.NotSelected = make([]Explanation, 0, n)
		for _, i := range all {
			if !isTarget[i] {
				res.NotSelected = append(res.NotSelected, Explanation{Cluster: p.cands[i].Name, Reason: e.reason(i)})
			}
		}
	}
	for k := range targets {
		targets[k].State = ""
	}
	return res, p.verifySpread(targets, at)
}

// locate returns the candidate index of each target, matching them with
// the selected candidates (both sorted by name), and fails on a target that
// was not selected or comes twice.
func (p *plan) locate(targets []workv1alpha1.TargetCluster, selected []int32) ([]int32, error) {
	at := make([]int32, len(targets))
	t := 0
	for _, i := range selected {
		if t == len(targets) {
			break
		}
		switch name := p.cands[i].Name; {
		case targets[t].Name < name:
			return nil, fmt.Errorf("target %s was not selected or comes twice", targets[t].Name)
		case targets[t].Name == name:
			at[t] = i
			t++
		}
	}
	if t < len(targets) {
		return nil, fmt.Errorf("target %s was not selected or comes twice", targets[t].Name)
	}
	return at, nil
}

// candidatesOf copies the chosen candidates for the strategy; when every
// candidate was chosen it hands over cands itself (strategies only read),
// sparing a copy of the whole fleet for PickAll.
func (p *plan) candidatesOf(chosen []int32) []Candidate {
	if len(chosen) == len(p.cands) {
		return p.cands
	}
	out := make([]Candidate, len(chosen))
	for k, i := range chosen {
		out[k] = p.cands[i]
	}
	return out
}

// verifyTarget checks one selected target of a strategy, which may be a
// plugin: the whole workload per cluster for Duplicated, a replica at least
// and no more than fits for Divided.
func (p *plan) verifyTarget(i int32, t *workv1alpha1.TargetCluster) error {
	switch {
	case !p.shape.Divided && t.Replicas != max(p.req.Replicas, 0):
		return fmt.Errorf("target %s has %d replicas, not %d", t.Name, t.Replicas, p.req.Replicas)
	case p.shape.Divided && t.Replicas <= 0:
		return fmt.Errorf("target %s has no replicas", t.Name)
	case p.shape.Capacity && int64(t.Replicas) > p.caps[i]:
		return fmt.Errorf("target %s has %d replicas, more than the %d that fit", t.Name, t.Replicas, p.caps[i])
	}
	return nil
}

// verifySpread checks what holds on the targets (candidate indices idx) as
// a whole: Divided replicas add up, and the spread constraints hold on the
// clusters that actually receive replicas.
func (p *plan) verifySpread(targets []workv1alpha1.TargetCluster, idx []int32) error {
	if p.shape.Divided {
		var sum int64
		for _, t := range targets {
			sum += int64(t.Replicas)
		}
		if sum != int64(max(p.req.Replicas, 0)) {
			return fmt.Errorf("targets hold %d replicas, not %d", sum, p.req.Replicas)
		}
	}
	if n := len(idx); n < p.clusterMin || n > p.clusterMax {
		return fmt.Errorf("%d targets, outside spreadConstraints[cluster] %d..%d", n, p.clusterMin, p.clusterMax)
	}
	for r := range p.rules {
		rl := &p.rules[r]
		used := make([]bool, len(rl.groups.groups))
		n := 0
		for _, i := range idx {
			if g := rl.groups.of[i]; !used[g] {
				used[g] = true
				n++
			}
		}
		if n < rl.min || n > rl.max {
			return fmt.Errorf("targets span %s, outside %s %d..%d", rl.noun(n), rl.name, rl.min, rl.max)
		}
	}
	return nil
}

// sortIfNeeded sorts s unless it is sorted already, as candidates and
// targets usually are (by name): the check is one comparison per element.
func sortIfNeeded[T any](s []T, cmp func(a, b T) int) {
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortFunc(s, cmp)
	}
}
