package apportion

import (
	"math/big"
	"slices"
	"testing"
)

// unlimited is the scheduling core's capacity of a cluster that may take
// any number of replicas (core.Unlimited).
const unlimited int64 = 1 << 40

func TestWebster(t *testing.T) {
	for _, tc := range []struct {
		name    string
		total   int64
		weights []int64
		ties    Ties
		want    []int64
	}{
		// Karmada's static weight table (assignment_test.go).
		{"12 by 3:2:1", 12, []int64{3, 2, 1}, Ties{}, []int64{6, 4, 2}},
		{"12 by 1:1:1", 12, []int64{1, 1, 1}, Ties{}, []int64{4, 4, 4}},
		{"13 by 3:2:1", 13, []int64{3, 2, 1}, Ties{}, []int64{7, 4, 2}},
		{"14 by 3:2:1", 14, []int64{3, 2, 1}, Ties{}, []int64{7, 5, 2}},
		{"3 by 2:1 (one cluster, two weights: the largest)", 3, []int64{2, 1}, Ties{}, []int64{2, 1}},
		// Ties: fewer replicas first, then name in the seed's direction.
		{"10 by 1:1:1, names ascending", 10, []int64{1, 1, 1}, Ties{}, []int64{4, 3, 3}},
		{"10 by 1:1:1, names descending", 10, []int64{1, 1, 1}, Ties{NameDescending: true}, []int64{3, 3, 4}},
		{"7 by 5:3:2", 7, []int64{5, 3, 2}, Ties{}, []int64{4, 2, 1}},
		{"small weights are not starved", 1, []int64{1, 3}, Ties{}, []int64{0, 1}},
		{"no weight, nothing", 5, []int64{0, 0}, Ties{}, []int64{0, 0}},
		{"zero total", 0, []int64{1, 2}, Ties{}, []int64{0, 0}},
		{"capacities never overrun", 3, []int64{unlimited, unlimited, 1}, Ties{}, []int64{2, 1, 0}},
		{"sums past 64 bits", 6, []int64{1 << 62, 1 << 62, 1 << 62}, Ties{}, []int64{2, 2, 2}},
		{"the most replicas there are", 1<<31 - 1, []int64{1, 1, 1}, Ties{}, []int64{715827883, 715827882, 715827882}},
		{"a divisor method may leave the quota (7.83 here) by more than one", 15, []int64{48, 120, 2, 2, 2, 2, 2, 2, 2, 48}, Ties{},
			[]int64{3, 9, 0, 0, 0, 0, 0, 0, 0, 3}},
		{"the jump and the heap agree at scale", 1_000_000, []int64{7, 5, 3, 1, 0}, Ties{}, []int64{437500, 312500, 187500, 62500, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Webster(tc.total, tc.weights, tc.ties); !slices.Equal(got, tc.want) {
				t.Errorf("Webster(%d, %v) = %v, want %v", tc.total, tc.weights, got, tc.want)
			}
		})
	}
}

func TestTiesFor(t *testing.T) {
	if (TiesFor("") != Ties{}) {
		t.Errorf("an empty UID must order names ascending")
	}
	// Both directions occur, and one UID always gives the same one.
	seen := map[bool]bool{}
	for _, uid := range []string{"a", "b", "c", "d", "e", "f"} {
		first := TiesFor(uid)
		seen[first.NameDescending] = true
		if again := TiesFor(uid); again != first {
			t.Fatalf("TiesFor(%q) is not stable", uid)
		}
	}
	if len(seen) != 2 {
		t.Errorf("six UIDs all gave one direction: %v", seen)
	}
}

// sequentialWebster hands out replicas one at a time by exact priority, as
// the method is defined: the reference for Webster's shortcut.
func sequentialWebster(total int64, weights []int64, ties Ties) []int64 {
	shares := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += max(w, 0)
	}
	if sum == 0 {
		return shares
	}
	h := &websterHeap{weights: weights, shares: shares, ties: ties}
	for ; total > 0; total-- {
		best := -1
		for i, w := range weights {
			if w <= 0 {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			h.idx = []int{i, best}
			if h.Less(0, 1) {
				best = i
			}
		}
		shares[best]++
	}
	return shares
}

// FuzzWebster checks webster against the one-at-a-time definition, that it
// is house-monotone (one more replica changes one share by one), that shares
// add up and never exceed a weight when the weights hold the total. Shares
// are not always within one of the exact quota total*w/W: no divisor method
// guarantees that (see the table), and Karmada's does not either.
func FuzzWebster(f *testing.F) {
	f.Add(uint16(10), []byte{1, 1, 1}, false)
	f.Add(uint16(7), []byte{5, 3, 2, 0}, true)
	f.Add(uint16(300), []byte{255, 255, 1, 17}, false)
	f.Fuzz(func(t *testing.T, total uint16, raw []byte, desc bool) {
		if len(raw) > 64 {
			raw = raw[:64]
		}
		ties := Ties{NameDescending: desc}
		weights := make([]int64, len(raw))
		var sum big.Int
		for i, b := range raw {
			weights[i] = int64(b)
			sum.Add(&sum, big.NewInt(weights[i]))
		}
		got := Webster(int64(total), weights, ties)
		if want := sequentialWebster(int64(total), weights, ties); !slices.Equal(got, want) {
			t.Fatalf("Webster(%d, %v) = %v, one at a time %v", total, weights, got, want)
		}
		if sum.Sign() == 0 {
			return
		}
		next := Webster(int64(total)+1, weights, ties)
		changed := 0
		var n int64
		for i := range got {
			n += got[i]
			switch d := next[i] - got[i]; {
			case d < 0:
				t.Fatalf("one more replica took one from %d: %v -> %v", i, got, next)
			case d > 0:
				changed += int(d)
			}
			if int64(total) <= sum.Int64() && got[i] > weights[i] {
				t.Fatalf("share %d = %d exceeds its weight %d (total %d <= %s)", i, got[i], weights[i], total, sum.String())
			}
		}
		if n != int64(total) || changed != 1 {
			t.Fatalf("shares %v sum to %d (want %d); one more changed %d", got, n, total, changed)
		}
	})
}
