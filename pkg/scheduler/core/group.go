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

// newGrouping builds a grouping from the key id of each member (of, by
// candidate index, -1 elsewhere; the grouping takes it over) and the keys,
// numbered in order of first sight. It returns the grouping and each key's
// group.
func newGrouping(cands []Candidate, members []int32, caps []int64, of []int32, keys []internKey) (*grouping, []int32) {
	groups := make([]group, len(keys))
	for k := range keys {
		groups[k] = group{Name: keys[k].s[0], Parent: keys[k].parent, Score: math.MinInt64}
	}
	for _, m := range members {
		gr := &groups[of[m]]
		gr.Size++
		gr.Score = max(gr.Score, cands[m].Score)
		gr.AvailableReplicas = satAdd(gr.AvailableReplicas, caps[m])
	}
	rank := make([]int32, len(groups))
	for i := range rank {
		rank[i] = int32(i)
	}
	slices.SortFunc(rank, func(a, b int32) int {
		ga, gb := &groups[a], &groups[b]
		if c := cmp.Compare(gb.Score, ga.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(ga.Name, gb.Name); c != 0 {
			return c
		}
		return cmp.Compare(ga.Parent, gb.Parent)
	})
	g := &grouping{of: of, groups: make([]group, len(rank))}
	newID := make([]int32, len(rank))
	for r, old := range rank {
		g.groups[r] = groups[old]
		newID[old] = int32(r)
	}
	for _, m := range members {
		of[m] = newID[of[m]]
	}
	return g, newID
}

// topology builds the groupings of a candidate set on demand. Clusters
// share few distinct topology tuples, so each cluster is looked up once, by
// its tuple, and every level is derived from the tuples: hashing each
// cluster once per level would dominate a 5,000-cluster schedule. The
// tuple holds only the fields down to the deepest level asked for.
type topology struct {
	cands   []Candidate
	members []int32
	caps    []int64
	// depth is how many of provider, region and zone the tuples hold.
	depth int
	// tuple is the topology tuple of each member; tuples are the distinct
	// ones, built on first use.
	tuple  []int32
	tuples []internKey
	levels map[policyv1alpha1.SpreadFieldValue]*grouping
}

// newTopology groups members by fields down to depth (1 provider, 2 region,
// 3 zone) and by any label.
func newTopology(cands []Candidate, members []int32, caps []int64, depth int) *topology {
	return &topology{cands: cands, members: members, caps: caps, depth: depth,
		levels: map[policyv1alpha1.SpreadFieldValue]*grouping{}}
}

// field groups by provider, region or zone, each level keyed under the
// group of the level above.
func (t *topology) field(f policyv1alpha1.SpreadFieldValue) *grouping {
	if g, ok := t.levels[f]; ok {
		return g
	}
	if t.tuple == nil {
		ids := newInterner()
		t.tuple = make([]int32, len(t.cands))
		for _, m := range t.members {
			c := &t.cands[m]
			k := internKey{parent: -1, s: [3]string{c.Provider, c.Region, c.Zone}}
			clear(k.s[t.depth:])
			t.tuple[m] = ids.id(&k)
		}
		t.tuples = ids.keys
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
	for k := range t.tuples {
		key := internKey{parent: -1, s: [3]string{t.tuples[k].s[level]}}
		if parent != nil {
			key.parent = parent.byTuple[k]
		}
		byTuple[k] = ids.id(&key)
	}
	of := t.newOf()
	for _, m := range t.members {
		of[m] = byTuple[t.tuple[m]]
	}
	g, newID := newGrouping(t.cands, t.members, t.caps, of, ids.keys)
	for k := range byTuple {
		byTuple[k] = newID[byTuple[k]]
	}
	g.byTuple = byTuple
	t.levels[f] = g
	return g
}

// label groups by the value of a cluster label.
func (t *topology) label(key string) *grouping {
	ids := newInterner()
	of := t.newOf()
	for _, m := range t.members {
		of[m] = ids.id(&internKey{parent: -1, s: [3]string{t.cands[m].Labels[key]}})
	}
	g, _ := newGrouping(t.cands, t.members, t.caps, of, ids.keys)
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
