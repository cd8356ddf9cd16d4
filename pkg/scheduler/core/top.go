package core

import "slices"

// topPrefix returns the prefix sums of the k largest vals, best first:
// element j is the sum of the j largest (saturating at Unlimited), for j up
// to min(k, len(vals)). A k-element heap keeps it O(n log k): k is a
// maxGroups, usually far below the fleet size.
func topPrefix(vals []int64, k int) []int64 {
	k = min(k, len(vals))
	// h holds the k largest seen so far, negated: its root is the smallest.
	h := make(maxHeap, 0, k)
	for _, v := range vals {
		switch {
		case len(h) < k:
			h = append(h, -v)
			h.up(len(h) - 1)
		case k > 0 && v > -h[0]:
			h[0] = -v
			h.down(0)
		}
	}
	slices.Sort(h)
	prefix := make([]int64, len(h)+1)
	for j, v := range h {
		prefix[j+1] = satAdd(prefix[j], -v)
	}
	return prefix
}

// maxHeap is a binary max-heap of int64 kept in place.
type maxHeap []int64

func (h maxHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] >= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (h maxHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r] > h[l] {
			l = r
		}
		if h[i] >= h[l] {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}
