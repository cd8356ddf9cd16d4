package framework

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// Framework runs the plugins of one profile. It is safe for concurrent use:
// each Run gets its own CycleState and buffers from a pool.
type Framework struct {
	profile     Profile
	filterNames []string
	scoreNames  []string
	filters     []FilterPlugin
	// preFilters[k] is filters[k] as a PreFilterPlugin, or nil.
	preFilters []PreFilterPlugin
	scores     []ScorePlugin
	preScores  []PreScorePlugin
	weights    []int64
	pool       sync.Pool
}

// New instantiates the profile's plugins from the registry, each with its
// args from the profile. A plugin named in both lists is instantiated once.
func New(reg Registry, p Profile) (*Framework, error) {
	f := &Framework{profile: p}
	f.pool.New = func() any { return &buffers{state: &CycleState{}} }
	built := map[string]Plugin{}
	get := func(name string) (Plugin, error) {
		if pl, ok := built[name]; ok {
			return pl, nil
		}
		factory, ok := reg[name]
		if !ok {
			return nil, fmt.Errorf("profile %q: plugin %q is not registered", p.Name, name)
		}
		pl, err := factory(p.Args[name])
		if err != nil {
			return nil, fmt.Errorf("profile %q: building plugin %q: %w", p.Name, name, err)
		}
		built[name] = pl
		return pl, nil
	}
	seen := map[string]bool{}
	for _, name := range p.Filters {
		if seen[name] {
			return nil, fmt.Errorf("profile %q: filter %q is listed twice", p.Name, name)
		}
		seen[name] = true
		pl, err := get(name)
		if err != nil {
			return nil, err
		}
		fp, ok := pl.(FilterPlugin)
		if !ok {
			return nil, fmt.Errorf("profile %q: plugin %q is not a filter plugin", p.Name, name)
		}
		pre, _ := pl.(PreFilterPlugin)
		f.filters = append(f.filters, fp)
		f.filterNames = append(f.filterNames, name)
		f.preFilters = append(f.preFilters, pre)
	}
	clear(seen)
	for _, wp := range p.Scores {
		if seen[wp.Name] {
			return nil, fmt.Errorf("profile %q: score plugin %q is listed twice", p.Name, wp.Name)
		}
		seen[wp.Name] = true
		if wp.Weight < 1 {
			return nil, fmt.Errorf("profile %q: score plugin %q has weight %d, want at least 1", p.Name, wp.Name, wp.Weight)
		}
		pl, err := get(wp.Name)
		if err != nil {
			return nil, err
		}
		sp, ok := pl.(ScorePlugin)
		if !ok {
			return nil, fmt.Errorf("profile %q: plugin %q is not a score plugin", p.Name, wp.Name)
		}
		pre, _ := pl.(PreScorePlugin)
		f.scores = append(f.scores, sp)
		f.scoreNames = append(f.scoreNames, wp.Name)
		f.preScores = append(f.preScores, pre)
		f.weights = append(f.weights, wp.Weight)
	}
	// Args for a plugin the profile does not run would be ignored: a
	// mistake the user should hear about (sorted, so the error is stable).
	for _, name := range slices.Sorted(maps.Keys(p.Args)) {
		if _, ok := built[name]; !ok {
			return nil, fmt.Errorf("profile %q: args for plugin %q, which the profile does not run", p.Name, name)
		}
	}
	return f, nil
}

// Profile returns the profile the framework runs.
func (f *Framework) Profile() Profile { return f.profile }

// buffers is the pooled memory of one cycle: its scratch and the Cycle
// itself, whose slices are reused from one workload to the next.
type buffers struct {
	c       Cycle
	state   *CycleState
	filters []int
	scorers []int
	lists   [][]ClusterScore
	weights []weightRule
	tiers   []ClusterSet
}

// cycle resets the buffers for a new cycle.
func (b *buffers) cycle(f *Framework, snap *Snapshot, w *Workload, term AffinityTerm) *Cycle {
	b.state.reset(snap, w, term)
	b.filters, b.scorers, b.weights, b.tiers = b.filters[:0], b.scorers[:0], b.weights[:0], b.tiers[:0]
	c := &b.c
	c.Term, c.buf, c.fw = term, b, f
	c.Rejections = resize(c.Rejections, snap.Len())
	clear(c.Rejections)
	c.Feasible = c.Feasible[:0]
	c.ScorePlugins = c.ScorePlugins[:0]
	c.Scores, c.Totals, c.Candidates = c.Scores[:0], c.Totals[:0], c.Candidates[:0]
	return c
}

// resize returns s with length n, reallocating only when it must grow.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/8)
	}
	return s[:n]
}

// Cycle is the outcome of filtering and scoring one workload under one
// affinity term. Its slices live in pooled memory: call Release when done,
// and do not use the Cycle afterwards. (A Cycle never released is simply
// garbage collected.)
type Cycle struct {
	Term AffinityTerm
	// Rejections is indexed like the snapshot.
	Rejections []Rejection
	// Feasible are the snapshot indices of the clusters that passed every
	// filter, ascending (name order).
	Feasible []int32
	// ScorePlugins are the score plugins that ran, in profile order.
	ScorePlugins []string
	// Scores holds the normalized score of Feasible[j] by ScorePlugins[p]
	// at j*len(ScorePlugins)+p.
	Scores []int64
	// Totals are the weighted sums of the scores, per feasible cluster.
	Totals []int64
	// Candidates are the feasible clusters as package core sees them,
	// parallel to Feasible.
	Candidates []core.Candidate

	buf *buffers
	fw  *Framework
}

// Release returns the cycle's memory to the pool.
func (c *Cycle) Release() {
	if b := c.buf; b != nil {
		c.buf = nil
		c.fw.pool.Put(b)
	}
}
