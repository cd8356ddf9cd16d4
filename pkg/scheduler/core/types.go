package core

import (
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Unlimited is the Available value of a cluster when the workload requests
// no resources, so any number of replicas fits.
const Unlimited int64 = 1 << 40

// Candidate is a cluster that passed every filter, as the algorithms see it.
type Candidate struct {
	// Name of the cluster; ties break by name.
	Name string
	// Topology of the cluster. Empty values form their own group.
	Provider, Region, Zone string
	// Labels of the cluster (for spreadByLabel).
	Labels map[string]string
	// Score is the weighted total of the score plugins; higher is better.
	Score int64
	// Available is how many replicas of this workload still fit there.
	Available int64
	// StaticWeight is the weight given by the placement's static weight list
	// (the largest weight of the rules the cluster matches, 0 if none).
	StaticWeight int64
	// Previous is the replicas this workload has there now.
	Previous int32
	// Held is true when the cluster is a current target of the workload
	// (also for Duplicated and replica-less kinds, where Previous says little).
	Held bool
	// Tier is the overflow tier of the cluster: 0 for the clusters of the
	// affinity term itself, k for those its k-th overflowAffinity adds.
	// Replicas go to a tier only when the tiers before it are full.
	Tier int32
}

// Mode says whether the previous placement should be kept where possible.
type Mode int

const (
	// Steady keeps what exists: scale up places only the new replicas, scale
	// down shrinks in proportion, and unchanged input gives the previous result.
	Steady Mode = iota
	// Fresh recomputes from scratch (a reschedule).
	Fresh
)

// Request is what to place.
type Request struct {
	// Replicas desired; 0 for kinds without replicas (placed like Duplicated).
	Replicas int32
	// Placement in force (replica scheduling and spread constraints are read
	// here; affinity and tolerations were already applied by filters).
	Placement *policyv1alpha1.Placement
	// Mode: Steady or Fresh.
	Mode Mode
	// TieSeed picks the direction in which equal claims on a replica break
	// by name (see apportion.TiesFor): the template's UID, as in Karmada.
	TieSeed string
}

// Result is a placement.
type Result struct {
	// Targets sorted by cluster name. For Duplicated each target carries the
	// workload's replicas.
	Targets []workv1alpha1.TargetCluster
	// NotSelected explains, per feasible cluster left out, why (sorted by name).
	NotSelected []Explanation
}

// Explanation says why one cluster was not selected.
type Explanation struct {
	Cluster string
	Reason  string
}

// UnschedulableError says which constraint could not be met.
type UnschedulableError struct {
	// Constraint names what failed, e.g. "spreadConstraints[region].minGroups"
	// or "replicas".
	Constraint string
	// Message is for humans.
	Message string
}

func (e *UnschedulableError) Error() string { return e.Message }
