package core

// order hands out the members best first: in Steady mode held clusters
// first (placements stay put), then higher score, more capacity, and name.
//
// It sorts lazily with a heap, O(n) to build and O(log n) per cluster
// handed out. Most searches stop after a few clusters (the best N, or
// enough to fit the replicas), and a full sort of thousands of candidates
// would cost more than the whole search.
type order struct {
	cands []Candidate
	keys  []orderKey
	heap  []int32
	out   []int32
}

// orderKey holds what the comparison reads, packed for the cache.
type orderKey struct {
	score, cap int64
	held       bool
}

func newOrder(p *plan) *order {
	o := &order{cands: p.cands, keys: make([]orderKey, len(p.cands)), heap: make([]int32, len(p.members)),
		out: make([]int32, 0, min(len(p.members), 64))}
	steady := p.req.Mode == Steady
	for _, m := range p.members {
		o.keys[m] = orderKey{score: p.cands[m].Score, cap: p.caps[m], held: steady && p.cands[m].Held}
	}
	copy(o.heap, p.members)
	for i := len(o.heap)/2 - 1; i >= 0; i-- {
		o.down(i)
	}
	return o
}

// better reports whether candidate a comes before candidate b.
func (o *order) better(a, b int32) bool {
	ka, kb := &o.keys[a], &o.keys[b]
	if ka.held != kb.held {
		return ka.held
	}
	if ka.score != kb.score {
		return ka.score > kb.score
	}
	if ka.cap != kb.cap {
		return ka.cap > kb.cap
	}
	return o.cands[a].Name < o.cands[b].Name
}

// at returns the member at position pos (0 is the best); pos must be below
// the number of members.
func (o *order) at(pos int) int32 {
	for len(o.out) <= pos {
		h := o.heap
		o.out = append(o.out, h[0])
		n := len(h) - 1
		h[0] = h[n]
		o.heap = h[:n]
		o.down(0)
	}
	return o.out[pos]
}

func (o *order) down(i int) {
	h := o.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && o.better(h[r], h[l]) {
			l = r
		}
		if !o.better(h[l], h[i]) {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}
