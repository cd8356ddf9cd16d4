package framework

import (
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// Workload is what one scheduling cycle places: a resource template, its
// placement and what the scheduler must remember of its past.
type Workload struct {
	Namespace  string
	Name       string
	APIVersion string
	Kind       string
	// UID of the template; it picks the direction of name ties in replica
	// division (apportion.TiesFor).
	UID string
	// Replicas desired; 0 for kinds without replicas.
	Replicas int32
	// Request is what one replica needs (Pods is ignored).
	Request Resources
	// Components are the pod templates of a workload made of several, in
	// the order of the binding's spec.components; nil for every other
	// workload. Such a workload has no Replicas and is placed whole: every
	// selected cluster must hold all of its components at once, unless it
	// divides (DivideComponents).
	Components []Component
	// DivideComponents: the components that are not divisible (the head)
	// go whole to one cluster, and each divisible component's replicas are
	// divided over the clusters with room (placement.DividesComponents).
	// NotDivided says why a workload whose placement asked for it is
	// placed whole instead ("" otherwise).
	DivideComponents bool
	NotDivided       string
	// PreviousHead is the cluster that runs the head of a workload whose
	// components were divided (the binding's
	// spec.dividedComponents.headCluster); a Steady cycle keeps it there
	// while it fits.
	PreviousHead string
	// Placement in force; nil places everywhere, Duplicated.
	Placement *policyv1alpha1.Placement
	// Previous are the current targets.
	Previous []workv1alpha1.TargetCluster
	// ObservedAffinityName is the fallback affinity term in force; a Steady
	// cycle starts from it rather than from the first term.
	ObservedAffinityName string
	// EvictionHistory and GracefulEvictionTasks keep evicted clusters out.
	EvictionHistory       []workv1alpha1.EvictionHistoryEntry
	GracefulEvictionTasks []workv1alpha1.GracefulEvictionTask
	// Failover behaviour of the policy (blockPredecessorSeconds).
	Failover *policyv1alpha1.FailoverBehavior
	// Now is the cycle's clock. Plugins read it instead of time.Now so that
	// a cycle is a pure function of its input.
	Now time.Time
	// Mode: core.Steady keeps the previous placement where possible,
	// core.Fresh recomputes it (a reschedule).
	Mode core.Mode
	// AffinityGroup and AntiAffinityGroup are the workload's groups under
	// placement.workloadAffinity (nil: none) and the other members' current
	// clusters, which whoever builds the workload looks up (the scheduling
	// controller in its cache, `shepherd plan` in its input).
	AffinityGroup, AntiAffinityGroup *PeerGroup
}

// PeerGroup is a workload affinity group ("<labelKey>=<labelValue>") and
// its other members.
type PeerGroup struct {
	Name string
	// Peers are the other members, sorted by Name; never the workload
	// itself, so a workload that moves is not held back by where it was.
	Peers []Peer
}

// Peer is another member of a workload affinity group.
type Peer struct {
	// Name identifies the member in explanations ("<Kind>/<name>").
	Name string
	// Clusters it runs on (its active targets), sorted; none while it is
	// not placed yet.
	Clusters []string
}

// WorkloadAffinityGroups returns the groups of a binding's spec, without
// peers (nil when it has none).
func WorkloadAffinityGroups(spec *workv1alpha1.BindingSpec) (affinity, antiAffinity *PeerGroup) {
	g := spec.WorkloadAffinityGroups
	if g == nil {
		return nil, nil
	}
	if g.AffinityGroup != "" {
		affinity = &PeerGroup{Name: g.AffinityGroup}
	}
	if g.AntiAffinityGroup != "" {
		antiAffinity = &PeerGroup{Name: g.AntiAffinityGroup}
	}
	return affinity, antiAffinity
}

// APIKey is the workload's "group/version/Kind", the key of ClusterInfo.APIs.
func (w *Workload) APIKey() string { return w.APIVersion + "/" + w.Kind }

// WorkloadFromBinding builds the workload of a binding. The cycle is Fresh
// when a reschedule was triggered after the last scheduling.
func WorkloadFromBinding(b workv1alpha1.BindingObject, now time.Time) *Workload {
	spec, status := b.GetBindingSpec(), b.GetBindingStatus()
	w := &Workload{
		Namespace:             spec.Resource.Namespace,
		Name:                  spec.Resource.Name,
		APIVersion:            spec.Resource.APIVersion,
		Kind:                  spec.Resource.Kind,
		UID:                   spec.Resource.UID,
		Replicas:              spec.Replicas,
		Placement:             spec.Placement,
		Previous:              spec.Clusters,
		ObservedAffinityName:  status.ObservedAffinityName,
		EvictionHistory:       spec.EvictionHistory,
		GracefulEvictionTasks: spec.GracefulEvictionTasks,
		Failover:              spec.Failover,
		Now:                   now,
		Mode:                  core.Steady,
	}
	w.AffinityGroup, w.AntiAffinityGroup = WorkloadAffinityGroups(spec)
	if rr := spec.ReplicaRequirements; rr != nil {
		w.Request = ResourcesFromList(rr.ResourceRequest)
	}
	w.Components = ComponentsFromSpec(spec.Components)
	w.DivideComponents, w.NotDivided = placement.DividesComponents(spec.Placement, spec.Components)
	if d := spec.DividedComponents; d != nil {
		w.PreviousHead = d.HeadCluster
	}
	if t := spec.RescheduleTriggeredAt; t != nil && (status.LastScheduledTime == nil || t.After(status.LastScheduledTime.Time)) {
		w.Mode = core.Fresh
	}
	return w
}

// AffinityTerm is the cluster affinity in force for one cycle.
type AffinityTerm struct {
	// Name of the fallback term; "" when the placement has none.
	Name string
	// Affinity to match; nil matches every cluster.
	Affinity *policyv1alpha1.ClusterAffinity
	// Overflow are the term's overflowAffinities in order: clusters that
	// take the replicas the ones before them cannot hold. They apply to
	// Divided workloads with replicas only (OverflowApplies).
	Overflow []*policyv1alpha1.ClusterAffinity
}

// OverflowApplies reports whether the term's overflow tiers take part for
// w: only replicas divided over clusters overflow; a Duplicated workload or
// a kind without replicas uses the term's own clusters, as in Karmada.
func (t AffinityTerm) OverflowApplies(w *Workload) bool {
	return len(t.Overflow) > 0 && w.Replicas > 0 && !placement.IsDuplicated(w.Placement)
}

// AffinityTerms lists the terms to try in order: the fallback terms of
// placement.clusterAffinities, or the single placement.clusterAffinity.
func AffinityTerms(p *policyv1alpha1.Placement) []AffinityTerm {
	if p == nil {
		return []AffinityTerm{{}}
	}
	if len(p.ClusterAffinities) == 0 {
		return []AffinityTerm{{Affinity: p.ClusterAffinity}}
	}
	terms := make([]AffinityTerm, len(p.ClusterAffinities))
	for i := range p.ClusterAffinities {
		ct := &p.ClusterAffinities[i]
		terms[i] = AffinityTerm{Name: ct.AffinityName, Affinity: &ct.ClusterAffinity}
		for k := range ct.OverflowAffinities {
			terms[i].Overflow = append(terms[i].Overflow, &ct.OverflowAffinities[k].ClusterAffinity)
		}
	}
	return terms
}
