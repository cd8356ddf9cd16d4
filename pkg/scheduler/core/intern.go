package core

import "hash/maphash"

// interner numbers keys densely in order of first sight. Grouping looks up
// thousands of clusters per schedule, and a Go map with a struct key costs
// several times a string hash plus a probe of this open-addressed table; a
// one-entry cache catches neighbours that share a key. Ids depend only on
// the order of the keys, never on the hash seed.
type interner struct {
	seed  maphash.Seed
	slots []int32 // id+1 of the key stored there, 0 when empty
	keys  []internKey
	// hashes of the keys: a probe compares strings only on a full match.
	hashes []uint64
	last   int32 // id of the key looked up last, -1 at first
}

// internKey is up to three strings under a parent id.
type internKey struct {
	parent int32
	s      [3]string
}

func newInterner() *interner {
	return &interner{seed: maphash.MakeSeed(), slots: make([]int32, 64), last: -1}
}

// id returns the id of k, adding it when new.
func (t *interner) id(k *internKey) int32 {
	if t.last >= 0 && t.keys[t.last].same(k) {
		return t.last
	}
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
			t.last = id
			return id
		}
		if t.hashes[s-1] == h && t.keys[s-1].same(k) {
			t.last = s - 1
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

func (t *interner) hash(k *internKey) uint64 {
	h := uint64(k.parent+1) * 0x9e3779b97f4a7c15
	for i, s := range k.s {
		if s != "" {
			h = (h ^ maphash.String(t.seed, s) ^ uint64(i)) * 0xff51afd7ed558ccd
		}
	}
	return h
}

// same reports whether two keys are equal, cheapest comparisons first.
func (a *internKey) same(b *internKey) bool {
	return a.parent == b.parent && len(a.s[0]) == len(b.s[0]) && len(a.s[1]) == len(b.s[1]) && len(a.s[2]) == len(b.s[2]) &&
		a.s[2] == b.s[2] && a.s[1] == b.s[1] && a.s[0] == b.s[0]
}
