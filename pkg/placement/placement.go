// Package placement is the vocabulary of a placement, in one place: how
// a policy's placement divides replicas (Duplicated, a strategy's name,
// static weights), whether it takes every eligible cluster, whether its
// replicas may sit on overflow clusters, how long an evicted cluster stays
// blocked, and how the strategy reads for a person. The scheduler, its
// plugins, the controllers and the dashboard all ask it, so that they never
// disagree on what a placement means.
//
// It is a leaf: it imports the API types only.
package placement

import (
	"slices"
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Names of the built-in strategies that assign replicas.
const (
	// StrategyDuplicated gives every selected cluster all the replicas.
	StrategyDuplicated = "Duplicated"
	// StrategyStaticWeight divides by static weights, or equally when the
	// placement gives no weights (Karmada's behaviour).
	StrategyStaticWeight = "StaticWeight"
	// StrategyDynamicWeight divides in proportion to the replicas that fit.
	StrategyDynamicWeight = "DynamicWeight"
	// StrategyAggregated divides onto as few clusters as possible.
	StrategyAggregated = "Aggregated"
)

// IsDuplicated is true when every selected cluster runs all replicas
// (also when the placement says nothing about replicas).
func IsDuplicated(p *policyv1alpha1.Placement) bool {
	return p == nil || p.ReplicaScheduling == nil ||
		p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated
}

// StaticWeights returns the static weight list when replicas are divided by
// static weights, nil otherwise.
func StaticWeights(p *policyv1alpha1.Placement) []policyv1alpha1.StaticClusterWeight {
	if IsDuplicated(p) {
		return nil
	}
	rs := p.ReplicaScheduling
	if rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated || rs.WeightPreference == nil {
		return nil
	}
	return rs.WeightPreference.StaticWeightList
}

// StrategyName is the strategy that assigns replicas for placement p:
//   - nil placement, nil replicaScheduling or Duplicated: Duplicated;
//   - replicas == 0 (kinds without replicas): Duplicated, with 0 per target;
//   - Divided + Aggregated: Aggregated;
//   - Divided + Weighted (or no preference) + dynamicWeight: DynamicWeight;
//   - Divided + Weighted otherwise: StaticWeight (static list or, with no
//     weightPreference, equal weights as in Karmada).
//
// An empty replicaSchedulingType means Divided, the API default.
func StrategyName(p *policyv1alpha1.Placement, replicas int32) string {
	if p == nil || p.ReplicaScheduling == nil || replicas <= 0 ||
		p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return StrategyDuplicated
	}
	rs := p.ReplicaScheduling
	switch {
	case rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return StrategyAggregated
	case rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "":
		return StrategyDynamicWeight
	default:
		return StrategyStaticWeight
	}
}

// Describe names how a placement divides replicas, as the docs and the
// dashboard do: the scheduler's own choice (StrategyName), with static
// weights told apart from equal ones: Duplicated, Divided (Aggregated),
// Divided (static weights), Divided (dynamic weights) or Divided (equal
// weights).
func Describe(p *policyv1alpha1.Placement, replicas int32) string {
	switch StrategyName(p, replicas) {
	case StrategyAggregated:
		return "Divided (Aggregated)"
	case StrategyDynamicWeight:
		return "Divided (dynamic weights)"
	case StrategyStaticWeight:
		if wp := p.ReplicaScheduling.WeightPreference; wp != nil && len(wp.StaticWeightList) > 0 {
			return "Divided (static weights)"
		}
		return "Divided (equal weights)"
	}
	return string(policyv1alpha1.ReplicaSchedulingTypeDuplicated)
}

// PlacesEverywhere reports whether the placement takes every eligible
// cluster ("PickAll"): whole copies (Duplicated, or a kind without
// replicas) and no spread constraint bounding the number of groups.
func PlacesEverywhere(spec *workv1alpha1.BindingSpec) bool {
	if !IsDuplicated(spec.Placement) && spec.Replicas > 0 {
		return false
	}
	if divides, _ := DividesComponents(spec.Placement, spec.Components); divides {
		// One head cluster and shares by room: a cluster that becomes
		// eligible is no reason to move them.
		return false
	}
	return spec.Placement == nil || !slices.ContainsFunc(spec.Placement.SpreadConstraints, func(c policyv1alpha1.SpreadConstraint) bool {
		return c.MaxGroups != nil
	})
}

// Overflows reports whether the binding's divided replicas may sit on
// overflow clusters: the affinity term in force (status.observedAffinityName,
// or the first) has overflowAffinities.
func Overflows(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus) bool {
	if spec.Placement == nil || IsDuplicated(spec.Placement) || spec.Replicas == 0 {
		return false
	}
	for i, t := range spec.Placement.ClusterAffinities {
		if t.AffinityName == status.ObservedAffinityName || (status.ObservedAffinityName == "" && i == 0) {
			return len(t.OverflowAffinities) > 0
		}
	}
	return false
}

// BlockWindow is how long a cluster a workload was evicted from stays
// blocked for it; 0 means until the eviction history is cleared.
func BlockWindow(f *policyv1alpha1.FailoverBehavior) time.Duration {
	secs := policyv1alpha1.DefaultBlockPredecessorSeconds
	if f != nil && f.Application != nil && f.Application.BlockPredecessorSeconds != nil {
		secs = *f.Application.BlockPredecessorSeconds
	}
	return time.Duration(secs) * time.Second
}
