package core

import (
	"cmp"
	"math"
	"slices"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// group is one provider, region, zone or label value of the candidates.
type group struct {
	// Name is the value; "" holds the clusters that have none.
	Name string
	// Parent is the index of the enclosing group one level up (the provider
	// of a region, the region of a zone), -1 for providers and labels.
	Parent int32
	// Score is the best score of the group's clusters. The best rather than
	// a sum: a placement that spreads over a group needs one good cluster
	// there, not many mediocre ones, and a sum would favour big groups just
	// for their size. It also makes a best-first walk over clusters open
	// groups in group-score order, so selection chooses groups top-down by
	// score without enumerating group combinations (see search).
	Score int64
	// AvailableReplicas is the replicas of the workload the group can hold,
	// the sum of its clusters' capacity (Available + Previous), saturating
	// at Unlimited.
	AvailableReplicas int64
	// Size is the number of clusters in the group.
	Size int32
}

// grouping puts candidates into groups by one key: provider, region, zone
// or a label.
//
// Regions and zones are keyed by their whole path (provider/region,
// provider/region/zone), so the tree is provider -> region -> zone ->
// cluster: the same region name under two providers is two regions, as
// cloud regions belong to one provider. A cluster missing a field joins the
// "" group under its parent (the zone-less clusters of a region form one
// zone); it counts as a group like any other, so a fleet with partial
// topology still spreads instead of failing. Label groups are flat, with ""
// holding the clusters without the label.
type grouping struct {
	// of is the group of each candidate (by candidate index), -1 for
	// candidates selection does not consider.
	of []int32
	// groups are sorted by Score descending, then name, then parent, so a
	// group's index is its rank and does not depend on candidate order.
	groups []group
	// byTuple is the group of each topology tuple (see topology), for the
	// provider, region and zone levels.
	byTuple []int32
}

// rank sorts groups best first (Score descending, then name, then parent,
// so a group's index does not depend on candidate order) and returns them
// with the new index of each old one.
func rank(groups []group) ([]group, []int32) {
	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ga, gb := &groups[a], &groups[b]
		if c := cmp.Compare(gb.Score, ga.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(ga.Name, gb.Name); c != 0 {
			return c
		}
		return cmp.Compare(ga.Parent, gb.Parent)
	})
	sorted := make([]group, len(groups))
	newID := make([]int32, len(groups))
	for r, old := range order {
		sorted[r] = groups[old]
		newID[old] = int32(r)
	}
	return sorted, newID
}

// add counts a cluster or a part of a group into gr.
func (gr *group) add(score, available int64, size int32) {
	gr.Score = max(gr.Score, score)
	gr.AvailableReplicas = satAdd(gr.AvailableReplicas, available)
	gr.Size += size
}

// topology builds the groupings of a candidate set on demand. Clusters
// share few distinct topology tuples, so each cluster is read once, to find
// its tuple and count it there, and every level is derived from the tuples:
// hashing and reading each cluster once per level would dominate a
// 5,000-cluster schedule. The tuple holds only the fields down to the
// deepest level asked for.
type topology struct {
	cands   []Candidate
	members []int32
	caps    []int64
	// depth is how many of provider, region and zone the tuples hold.
	depth int
	// tuple is the topology tuple of each member; tuples are the distinct
	// ones, with their clusters counted in stats; built on first use.
	tuple  []int32
	tuples []internKey
	stats  []group
	levels map[policyv1alpha1.SpreadFieldValue]*grouping
}

// newTopology groups members by fields down to depth (1 provider, 2 region,
// 3 zone) and by any label.
func newTopology(cands []Candidate, members []int32, caps []int64, depth int) *topology {
	return &topology{cands: cands, members: members, caps: caps, depth: depth,
		levels: map[policyv1alpha1.SpreadFieldValue]*grouping{}}
}

// field groups by provider, region or zone, each level keyed under the
// group of the level above. depth must cover the field.
func (t *topology) field(f policyv1alpha1.SpreadFieldValue) *grouping {
	if g, ok := t.levels[f]; ok {
		return g
	}
	if t.tuple == nil {
		t.readTuples()
	}
	var level int
	var parent *grouping
	switch f {
	case policyv1alpha1.SpreadByFieldRegion:
		level, parent = 1, t.field(policyv1alpha1.SpreadByFieldProvider)
	case policyv1alpha1.SpreadByFieldZone:
		level, parent = 2, t.field(policyv1alpha1.SpreadByFieldRegion)
	}
	ids := newInterner()
	byTuple := make([]int32, len(t.tuples))
	var groups []group
	for k := range t.tuples {
		key := internKey{parent: -1, s: [3]string{t.tuples[k].s[level]}}
		if parent != nil {
			key.parent = parent.byTuple[k]
		}
		byTuple[k] = ids.id(&key)
		if int(byTuple[k]) == len(groups) {
			groups = append(groups, group{Name: key.s[0], Parent: key.parent, Score: math.MinInt64})
		}
		st := &t.stats[k]
		groups[byTuple[k]].add(st.Score, st.AvailableReplicas, st.Size)
	}
	g := &grouping{of: t.newOf(), byTuple: byTuple}
	var newID []int32
	g.groups, newID = rank(groups)
	for k := range byTuple {
		byTuple[k] = newID[byTuple[k]]
	}
	for _, m := range t.members {
		g.of[m] = byTuple[t.tuple[m]]
	}
	t.levels[f] = g
	return g
}

// readTuples finds every member's topology tuple and counts it there.
func (t *topology) readTuples() {
	ids := newInterner()
	t.tuple = make([]int32, len(t.cands))
	for _, m := range t.members {
		c := &t.cands[m]
		k := internKey{parent: -1}
		switch t.depth {
		case 3:
			k.s[2] = c.Zone
			fallthrough
		case 2:
			k.s[1] = c.Region
			fallthrough
		default:
			k.s[0] = c.Provider
		}
		id := ids.id(&k)
		if int(id) == len(t.stats) {
			t.stats = append(t.stats, group{Score: math.MinInt64})
		}
		t.tuple[m] = id
		t.stats[id].add(c.Score, t.caps[m], 1)
	}
	t.tuples = ids.keys
}

// label groups by the value of a cluster label.
func (t *topology) label(key string) *grouping {
	ids := newInterner()
	g := &grouping{of: t.newOf()}
	var groups []group
	for _, m := range t.members {
		c := &t.cands[m]
		id := ids.id(&internKey{parent: -1, s: [3]string{c.Labels[key]}})
		if int(id) == len(groups) {
			groups = append(groups, group{Name: c.Labels[key], Parent: -1, Score: math.MinInt64})
		}
		g.of[m] = id
		groups[id].add(c.Score, t.caps[m], 1)
	}
	var newID []int32
	g.groups, newID = rank(groups)
	for _, m := range t.members {
		g.of[m] = newID[g.of[m]]
	}
	return g
}

// newOf returns a group-per-candidate slice with no candidate in a group.
func (t *topology) newOf() []int32 {
	of := make([]int32, len(t.cands))
	for i := range of {
		of[i] = -1
	}
	return of
}
