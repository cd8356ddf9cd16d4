package core

import (
	"errors"
	"math/big"
	"testing"
)

// FuzzSteadyScale places a workload from scratch, then rescales it in
// Steady mode with the placement applied. Without spread constraints (which
// may move a replica to keep every group served), a scale-up keeps every
// previous replica and a scale-down only shrinks previous targets.
func FuzzSteadyScale(f *testing.F) {
	for _, seed := range [][]byte{
		{25, 12, 17, 1, 3, 0},
		{5, 20, 30, 0, 3, 0, 2, 1, 1},
		{40, 8, 9, 0, 4, 0, 1, 1, 1, 1, 5, 3, 2, 0},
		{0, 15, 25, 1, 2, 0},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		delta := int32(data[0]%41) - 20
		cands, r := fleetFrom(data[1:])
		before, err := Schedule(cands, fresh(r))
		if err != nil {
			return
		}
		next := steadyFrom(cands, before)
		r2 := r
		r2.Mode, r2.Replicas = Steady, max(r.Replicas+delta, 0)
		after, err := Schedule(next, r2)
		if err != nil {
			var ue *UnschedulableError
			if !errors.As(err, &ue) {
				t.Fatalf("not an UnschedulableError: %v", err)
			}
			return
		}
		checkResult(t, next, r2, after)
		name := StrategyName(r.Placement, r.Replicas)
		if name == StrategyDuplicated || name != StrategyName(r2.Placement, r2.Replicas) ||
			len(r.Placement.SpreadConstraints) > 0 && !staticWeighted(r.Placement) {
			return
		}
		prev := map[string]int32{}
		for _, tc := range before.Targets {
			prev[tc.Name] = tc.Replicas
		}
		now := map[string]int32{}
		for _, tc := range after.Targets {
			now[tc.Name] = tc.Replicas
		}
		for n, p := range prev {
			if r2.Replicas >= r.Replicas && now[n] < p {
				t.Fatalf("scale-up %d->%d took replicas from %s:\nwas %s\nnow %s", r.Replicas, r2.Replicas, n, show(before.Targets), show(after.Targets))
			}
		}
		for n, q := range now {
			if r2.Replicas < r.Replicas && q > prev[n] {
				t.Fatalf("scale-down %d->%d grew %s:\nwas %s\nnow %s", r.Replicas, r2.Replicas, n, show(before.Targets), show(after.Targets))
			}
		}
	})
}

// FuzzApportion checks the largest remainder method: shares add up to the
// total and each lies within one of its exact quota.
func FuzzApportion(f *testing.F) {
	f.Add(uint16(10), []byte{1, 1, 1})
	f.Add(uint16(7), []byte{5, 3, 2, 0})
	f.Add(uint16(3), []byte{255, 255, 1})
	f.Fuzz(func(t *testing.T, total uint16, raw []byte) {
		weights := make([]int64, len(raw))
		var sum big.Int
		for i, b := range raw {
			weights[i] = int64(b&0x07) << (4 * (b >> 4)) // up to 7<<60: sums pass 64 bits
			sum.Add(&sum, big.NewInt(weights[i]))
		}
		shares := apportion(int64(total), weights)
		var got int64
		for i, s := range shares {
			got += s
			if sum.Sign() == 0 {
				continue
			}
			// quota = total*w/sum; the share is its floor or floor+1.
			var q, m big.Int
			q.Mul(big.NewInt(int64(total)), big.NewInt(weights[i]))
			q.DivMod(&q, &sum, &m)
			lo := q.Int64()
			if s < lo-1 || s > lo+1 {
				t.Fatalf("share %d of weight %d is %d, quota %d", i, weights[i], s, lo)
			}
		}
		if sum.Sign() > 0 && got != int64(total) {
			t.Fatalf("shares sum to %d, want %d (%v -> %v)", got, total, weights, shares)
		}
	})
}
