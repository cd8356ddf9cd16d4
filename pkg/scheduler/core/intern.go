package core

import "hash/maphash"

// interner numbers keys densely in order of first sight. Grouping looks up
// thousands of clusters per schedule, and a Go map with a struct key costs
// several times one string hash plus a probe of this open-addressed table.
// Ids depend only on the order of the keys, never on the hash seed.
type interner struct {
	seed  maphash.Seed
	slots []int32 // id+1 of the key stored there, 0 when empty
	keys  []internKey
	// hashes of the keys: a probe compares strings only on a full match.
	hashes []uint64
}

// internKey is up to three strings under a parent id.
type internKey struct {
	parent int32
	s      [3]string
}

func newInterner() *interner {
	return &interner{seed: maphash.MakeSeed(), slots: make([]int32, 64)}
}

// id returns the id of k, adding it when new.
func (t *interner) id(k *internKey) int32 {
	mask := uint64(len(t.slots) - 1)
	h := t.hash(k)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.keys))
			t.keys, t.hashes = append(t.keys, *k), append(t.hashes, h)
			t.slots[i] = id + 1
			if 2*len(t.keys) > len(t.slots) {
				t.grow()
			}
			return id
		}
		if t.hashes[s-1] == h && t.keys[s-1].same(k) {
			return s - 1
		}
	}
}

// grow doubles the table, keeping it at most half full.
func (t *interner) grow() {
	t.slots = make([]int32, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for id, h := range t.hashes {
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(id) + 1
	}
}

// hash hashes the last non-empty string of k (the zone of a topology
// tuple, or the region when the zone is missing, ...) with the lengths of
// all three: one string hash per key instead of three. Keys that differ
// only in an outer string of the same length collide and are told apart by
// same, at the cost of a longer probe.
func (t *interner) hash(k *internKey) uint64 {
	h := uint64(k.parent+1)*0x9e3779b97f4a7c15 ^ uint64(len(k.s[0]))<<40 ^ uint64(len(k.s[1]))<<20 ^ uint64(len(k.s[2]))
	for i := len(k.s) - 1; i >= 0; i-- {
		if k.s[i] != "" {
			return (h ^ maphash.String(t.seed, k.s[i]) ^ uint64(i)) * 0xff51afd7ed558ccd
		}
	}
	return h * 0xff51afd7ed558ccd
}

// same reports whether two keys are equal, cheapest comparisons first.
func (a *internKey) same(b *internKey) bool {
	return a.parent == b.parent && len(a.s[0]) == len(b.s[0]) && len(a.s[1]) == len(b.s[1]) && len(a.s[2]) == len(b.s[2]) &&
		a.s[2] == b.s[2] && a.s[1] == b.s[1] && a.s[0] == b.s[0]
}
