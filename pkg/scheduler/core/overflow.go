package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// tiered reports whether cands span overflow tiers that matter for req:
// divided replicas only (Duplicated and replica-less kinds use tier 0; the
// framework gives them no other tier anyway).
func tiered(cands []Candidate, req Request) bool {
	if placement.StrategyName(req.Placement, req.Replicas) == placement.StrategyDuplicated {
		return false
	}
	for i := range cands {
		if cands[i].Tier > 0 {
			return true
		}
	}
	return false
}

// scheduleTiers places replicas tier by tier, as Karmada's overflow
// affinities do: each tier in order gets as many of the replicas left as
// its clusters hold (their capacity, Available + Previous), placed by the
// strategy on that tier alone, until none are left. A tier not needed
// gets nothing and its clusters are explained.
//
// Each tier's share is placed in Steady mode like any placement, so when
// room returns in an earlier tier, the next scheduling grows that tier by
// what it adds and shrinks the later tiers in proportion: replicas come
// back without moving the rest.
func scheduleTiers(cands []Candidate, req Request) (Result, error) {
	var top int32
	for i := range cands {
		top = max(top, cands[i].Tier)
	}
	byTier := make([][]Candidate, top+1)
	for i := range cands {
		t := max(cands[i].Tier, 0)
		byTier[t] = append(byTier[t], cands[i])
	}
	total := int64(max(req.Replicas, 0))
	left := total
	var res Result
	for tier, tc := range byTier {
		if len(tc) == 0 {
			continue
		}
		var room int64
		for i := range tc {
			room = satAdd(room, capacity(&tc[i]))
		}
		n := min(left, room)
		if n == 0 {
			why := fmt.Sprintf("%s not needed: the clusters before it hold all %d replicas", tierName(tier), total)
			if left > 0 {
				why = fmt.Sprintf("%s has no room for the workload", tierName(tier))
			}
			for i := range tc {
				res.NotSelected = append(res.NotSelected, Explanation{Cluster: tc[i].Name, Reason: why})
			}
			continue
		}
		r := req
		r.Replicas = int32(n)
		out, err := scheduleOne(tc, r)
		if err != nil {
			var ue *UnschedulableError
			if errors.As(err, &ue) && tier > 0 {
				return Result{}, &UnschedulableError{Constraint: ue.Constraint, Message: tierName(tier) + ": " + ue.Message}
			}
			return Result{}, err
		}
		res.Targets = append(res.Targets, out.Targets...)
		res.NotSelected = append(res.NotSelected, out.NotSelected...)
		left -= n
	}
	if left > 0 {
		return Result{}, &UnschedulableError{Constraint: "replicas", Message: fmt.Sprintf(
			"replicas: the affinity term and its overflowAffinities hold %d of %d replicas", total-left, total)}
	}
	slices.SortFunc(res.Targets, func(a, b workv1alpha1.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(res.NotSelected, func(a, b Explanation) int { return cmp.Compare(a.Cluster, b.Cluster) })
	return res, nil
}

// tierName names tier k in messages.
func tierName(k int) string {
	if k == 0 {
		return "the affinity term"
	}
	return fmt.Sprintf("overflowAffinities[%d]", k-1)
}
