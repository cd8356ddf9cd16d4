package core

import "slices"

// firstBatch is how many of the best members order finds in its first pass.
const firstBatch = 64

// order hands out the members best first: in Steady mode held clusters
// first (placements stay put), then higher score, more capacity, and name.
//
// It sorts lazily. Most searches stop after a few clusters (the best N, or
// enough to fit the replicas), so the first pass keeps only the best
// firstBatch members in a small heap, one comparison for most members;
// only a search that goes past them heapifies the rest, O(n) once and
// O(log n) per cluster after. A full sort of thousands of candidates would
// cost more than the whole search.
type order struct {
	cands   []Candidate
	caps    []int64
	steady  bool
	members []int32
	// out are the members handed out so far, best first; rest the others
	// once the first batch ran out (a heap, best at the root).
	out    []int32
	rest   []int32
	heaped bool
}

func newOrder(p *plan) *order {
	return &order{cands: p.cands, caps: p.caps, steady: p.req.Mode == Steady, members: p.members}
}

// better reports whether candidate a comes before candidate b.
func (o *order) better(a, b int32) bool {
	ca, cb := &o.cands[a], &o.cands[b]
	if o.steady && ca.Held != cb.Held {
		return ca.Held
	}
	if ca.Score != cb.Score {
		return ca.Score > cb.Score
	}
	if o.caps[a] != o.caps[b] {
		return o.caps[a] > o.caps[b]
	}
	return ca.Name < cb.Name
}

func (o *order) worse(a, b int32) bool { return o.better(b, a) }

// at returns the member at position pos (0 is the best); pos must be below
// the number of members.
func (o *order) at(pos int) int32 {
	if pos < len(o.out) {
		return o.out[pos]
	}
	if len(o.out) == 0 {
		o.first()
		if pos < len(o.out) {
			return o.out[pos]
		}
	}
	if !o.heaped {
		// The rest are the members after the last one handed out; the
		// order is total (names are unique), so nothing is lost or doubled.
		last := o.out[len(o.out)-1]
		for _, m := range o.members {
			if o.better(last, m) {
				o.rest = append(o.rest, m)
			}
		}
		for i := len(o.rest)/2 - 1; i >= 0; i-- {
			siftDown(o.rest, i, o.better)
		}
		o.heaped = true
	}
	for len(o.out) <= pos {
		h := o.rest
		o.out = append(o.out, h[0])
		n := len(h) - 1
		h[0] = h[n]
		o.rest = h[:n]
		siftDown(o.rest, 0, o.better)
	}
	return o.out[pos]
}

// first finds the best firstBatch members in one pass, keeping them in a
// heap with the worst at the root, and hands them out sorted.
func (o *order) first() {
	k := min(firstBatch, len(o.members))
	h := make([]int32, 0, k)
	for _, m := range o.members {
		switch {
		case len(h) < k:
			h = append(h, m)
			for i := len(h) - 1; i > 0 && o.worse(h[i], h[(i-1)/2]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case o.better(m, h[0]):
			h[0] = m
			siftDown(h, 0, o.worse)
		}
	}
	slices.SortFunc(h, func(a, b int32) int {
		if o.better(a, b) {
			return -1
		}
		return 1
	})
	o.out = h
}

// siftDown restores the heap property below i, where first(a, b) says a
// belongs above b.
func siftDown(h []int32, i int, first func(a, b int32) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && first(h[r], h[l]) {
			l = r
		}
		if !first(h[l], h[i]) {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}
