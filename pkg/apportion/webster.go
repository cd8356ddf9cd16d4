// Package apportion divides a whole number of replicas over weights by the
// Webster (Sainte-Laguë) divisor method, as Karmada does, with
// deterministic ties (Ties, TiesFor): the same inputs always give the same
// shares. It is a leaf: the scheduling core divides replicas with it and
// the resource interpreter a Divided Job's completions, in proportion to
// the replicas, by the same method.
package apportion

import (
	"container/heap"
	"hash/fnv"
	"math/bits"
)

// Ties says how Webster orders two clusters whose next replicas have the
// same priority: the one holding fewer replicas first, then by name,
// ascending or descending. Karmada draws the direction from the template's
// UID, so that across many workloads the odd replica does not always land
// on the alphabetically first cluster; Shepherd does the same (TiesFor) and
// the same template always gets the same direction.
type Ties struct {
	// NameDescending prefers the lexicographically larger name.
	NameDescending bool
}

// TiesFor is the tie rule for a template UID: names descending when the
// FNV-32a hash of the UID is odd, ascending when it is even or the UID is
// empty (Karmada v1.18's rule).
func TiesFor(uid string) Ties {
	if uid == "" {
		return Ties{}
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return Ties{NameDescending: h.Sum32()&1 == 1}
}

// Webster divides total replicas over weights by the Webster (Sainte-Laguë)
// divisor method, as Karmada does: replicas are handed out one at a time,
// each to the cluster with the highest priority weight/(2*held+1), ties by
// Ties (callers pass the weights in name order, so index order is name
// order). Being sequential, the method is house-monotone: one more replica
// in total changes one share by one, and never takes a replica from anyone.
// When total <= sum(weights), no share exceeds its weight, so weights that
// are capacities are never overrun. A zero weight gets nothing; all zero
// weights give all zeros.
//
// Handing out 2^31 replicas one by one would be slow, so Webster first
// gives every cluster the replicas whose priority exceeds a bound that the
// last replica's priority cannot exceed, W/(2*total-n), exactly in integers;
// at most 2n replicas are left for the heap. Priorities are compared as
// exact fractions in 128 bits.
func Webster(total int64, weights []int64, ties Ties) []int64 {
	n := len(weights)
	shares := make([]int64, n)
	var sum uint64
	for _, w := range weights {
		sum += uint64(max(w, 0))
	}
	if total <= 0 || sum == 0 {
		return shares
	}
	// Static weights are user input: shift them all right until their sum
	// fits 63 bits. Proportions barely move and every product fits 128.
	if shift := bits.Len64(sum) - 62; shift > 0 {
		sum = 0
		for i := range weights {
			sum += uint64(max(weights[i], 0)) >> shift
		}
		ws := make([]int64, n)
		for i := range weights {
			ws[i] = max(weights[i], 0) >> shift
		}
		weights = ws
	}
	left := total
	if 2*total > int64(n) {
		// A cluster's k-th replica has priority w/(2k-1) > W/(2T-n)
		// exactly when 2k-1 < w*(2T-n)/W: count those k.
		den := uint64(2*total - int64(n))
		for i, w := range weights {
			if w <= 0 {
				continue
			}
			hi, lo := bits.Mul64(uint64(w), den)
			// q = floor((w*den - 1) / W): the largest odd-or-even 2k-1 < w*den/W.
			if lo == 0 {
				hi--
			}
			lo--
			q, _ := bits.Div64(hi, lo, sum)
			shares[i] = int64((q + 1) / 2)
			left -= shares[i]
		}
	}
	if left <= 0 {
		return shares
	}
	h := &websterHeap{weights: weights, shares: shares, ties: ties}
	for i, w := range weights {
		if w > 0 {
			h.idx = append(h.idx, i)
		}
	}
	heap.Init(h)
	for ; left > 0; left-- {
		shares[h.idx[0]]++
		heap.Fix(h, 0)
	}
	return shares
}

// websterHeap orders cluster indices by the priority of their next replica.
type websterHeap struct {
	idx     []int
	weights []int64
	shares  []int64
	ties    Ties
}

func (h *websterHeap) Len() int      { return len(h.idx) }
func (h *websterHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *websterHeap) Push(any)      { panic("websterHeap: fixed size") }
func (h *websterHeap) Pop() any      { panic("websterHeap: fixed size") }

// Less: higher priority wa/(2sa+1) first, compared as wa*(2sb+1) against
// wb*(2sa+1); then fewer replicas; then name.
func (h *websterHeap) Less(i, j int) bool {
	a, b := h.idx[i], h.idx[j]
	sa, sb := h.shares[a], h.shares[b]
	ahi, alo := bits.Mul64(uint64(h.weights[a]), uint64(2*sb+1))
	bhi, blo := bits.Mul64(uint64(h.weights[b]), uint64(2*sa+1))
	if ahi != bhi {
		return ahi > bhi
	}
	if alo != blo {
		return alo > blo
	}
	if sa != sb {
		return sa < sb
	}
	if h.ties.NameDescending {
		return a > b
	}
	return a < b
}
