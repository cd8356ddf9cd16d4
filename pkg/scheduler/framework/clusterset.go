package framework

import "math/bits"

// ClusterSet is a set of clusters of one Snapshot, as a bitset over their
// indices. Plugins compile selectors into ClusterSets once per cycle so that
// the per-cluster check is a bit test instead of label map lookups.
type ClusterSet []uint64

func wordsFor(n int) int { return (n + 63) >> 6 }

// Has reports whether cluster index i is in the set.
func (s ClusterSet) Has(i int) bool { return s[i>>6]&(1<<(uint(i)&63)) != 0 }

// Add adds cluster index i.
func (s ClusterSet) Add(i int) { s[i>>6] |= 1 << (uint(i) & 63) }

// Remove removes cluster index i.
func (s ClusterSet) Remove(i int) { s[i>>6] &^= 1 << (uint(i) & 63) }

// AddAll adds the indices of a postings list.
func (s ClusterSet) AddAll(indices []int32) {
	for _, i := range indices {
		s.Add(int(i))
	}
}

// RemoveAll removes the indices of a postings list.
func (s ClusterSet) RemoveAll(indices []int32) {
	for _, i := range indices {
		s.Remove(int(i))
	}
}

// Fill adds the first n cluster indices (every cluster of a snapshot of n).
func (s ClusterSet) Fill(n int) {
	full := n >> 6
	for i := 0; i < full; i++ {
		s[i] = ^uint64(0)
	}
	if rem := uint(n) & 63; rem != 0 {
		s[full] = 1<<rem - 1
	}
}

// Invert replaces the set by its complement among the first n indices.
func (s ClusterSet) Invert(n int) {
	for i := range s {
		s[i] = ^s[i]
	}
	if rem := uint(n) & 63; rem != 0 {
		s[n>>6] &= 1<<rem - 1
	}
}

// And keeps only the members also in o.
func (s ClusterSet) And(o ClusterSet) {
	for i := range s {
		s[i] &= o[i]
	}
}

// Or adds the members of o.
func (s ClusterSet) Or(o ClusterSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

// Copy makes s equal to o.
func (s ClusterSet) Copy(o ClusterSet) { copy(s, o) }

// AndNot removes the members of o.
func (s ClusterSet) AndNot(o ClusterSet) {
	for i := range s {
		s[i] &^= o[i]
	}
}

// IsEmpty is true when the set has no members.
func (s ClusterSet) IsEmpty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// ForEach calls f for every member in [lo, hi), in ascending order.
func (s ClusterSet) ForEach(lo, hi int, f func(i int)) {
	for wi := lo >> 6; wi<<6 < hi; wi++ {
		w := s[wi]
		for w != 0 {
			i := wi<<6 | bits.TrailingZeros64(w)
			w &= w - 1
			if i >= lo && i < hi {
				f(i)
			}
		}
	}
}

// Count returns the number of members.
func (s ClusterSet) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}
