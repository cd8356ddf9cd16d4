package framework

import (
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// APIID identifies an enabled API ("group/version/Kind") within a Snapshot.
type APIID int32

// TaintID identifies a distinct taint (key, value, effect) within a Snapshot.
type TaintID int32

// ClusterInfo is the scheduler's read-only view of one cluster, computed once
// per Snapshot. Build one by hand or with ClusterInfoFromCluster and pass it
// to NewSnapshot, which indexes it; plugins must not modify it.
type ClusterInfo struct {
	Name     string
	Provider string
	Region   string
	Zone     string
	Labels   map[string]string
	Taints   []corev1.Taint
	// APIs are the enabled APIs keyed "group/version/Kind" ("v1/Kind" for
	// the core group).
	APIs []string
	// Available is allocatable - allocated - allocating: what new replicas
	// can still use.
	Available Resources
	// Nodes is the room left node by node (the Cluster's node model), or
	// nil when the cluster does not report one: then only Available counts.
	Nodes []NodeRoom
	// Ready is the status of the Ready condition, "" when never reported.
	Ready metav1.ConditionStatus
	// Probed is true once the hub has observed the cluster's status; until
	// then an empty APIs list means "unknown", not "serves nothing".
	Probed bool
	// ProbedAt is when the cluster's status (and so its resource summary)
	// was last written; zero when never. Replicas the member reported
	// before it are part of Available (see Reservation).
	ProbedAt time.Time
	// Deleting is true when the cluster is being removed from the fleet.
	Deleting bool

	index    int
	apiBits  []uint64
	taintIDs []TaintID
}

// ClusterInfoFromCluster extracts what the scheduler needs from a Cluster.
func ClusterInfoFromCluster(c *clusterv1alpha1.Cluster) ClusterInfo {
	ci := ClusterInfo{
		Name:     c.Name,
		Provider: c.Spec.Provider,
		Region:   c.Spec.Region,
		Zone:     c.Spec.Zone,
		Labels:   c.Labels,
		Taints:   c.Spec.Taints,
		Deleting: c.DeletionTimestamp != nil,
		Probed:   c.Status.LastProbeTime != nil || len(c.Status.Conditions) > 0 || len(c.Status.APIEnablements) > 0,
	}
	if t := c.Status.LastProbeTime; t != nil {
		ci.ProbedAt = t.Time
	}
	if cond := findCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		ci.Ready = cond.Status
	}
	for _, e := range c.Status.APIEnablements {
		for _, r := range e.Resources {
			ci.APIs = append(ci.APIs, e.GroupVersion+"/"+r.Kind)
		}
	}
	// A report beyond the cluster's room bounds is ignored: the cluster is
	// judged to have no room (its RoomTrusted condition says why).
	if rs := c.Status.ResourceSummary; rs != nil && RoomClaimError(c) == nil {
		ci.Available = availableFrom(rs.Allocatable, rs.Allocated, rs.Allocating)
		ci.Nodes = nodeRoomsFrom(rs.Nodes)
	}
	return ci
}

// NodeRoom is Count nodes with at least Free room each.
type NodeRoom struct {
	Count int64
	Free  Resources
}

// nodeRoomsFrom converts a Cluster's node model. A malformed one (a group
// of no nodes, or more groups than the API allows) is not trusted: the
// cluster is then judged by its sums alone, as one without a model.
func nodeRoomsFrom(groups []clusterv1alpha1.NodeGroup) []NodeRoom {
	if len(groups) == 0 || len(groups) > clusterv1alpha1.MaxNodeGroups {
		return nil
	}
	out := make([]NodeRoom, 0, len(groups))
	for _, g := range groups {
		if g.Count < 1 {
			return nil
		}
		out = append(out, NodeRoom{Count: int64(g.Count), Free: ResourcesFromList(g.Free)})
	}
	return out
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// Index is the cluster's position in its Snapshot (clusters sorted by name);
// ClusterSets are indexed by it.
func (ci *ClusterInfo) Index() int { return ci.index }

// HasAPI reports whether the cluster serves the API.
func (ci *ClusterInfo) HasAPI(id APIID) bool {
	w := int(id) >> 6
	return w < len(ci.apiBits) && ci.apiBits[w]&(1<<(uint(id)&63)) != 0
}

// Field returns the value of a field usable in field selectors and spread
// constraints: provider, region or zone ("" for other names).
func (ci *ClusterInfo) Field(name string) string {
	switch name {
	case policyv1alpha1.ProviderField:
		return ci.Provider
	case policyv1alpha1.RegionField:
		return ci.Region
	case policyv1alpha1.ZoneField:
		return ci.Zone
	}
	return ""
}

// Fit returns how many replicas requesting req fit, and what limits the
// number: the cluster's free sums (see Resources.Fit), and, when the
// cluster reports its node model, the replicas that fit node by node (a
// replica never spans nodes), whichever is fewer. ResourceNodeRoom is the
// limit when the nodes hold fewer than the sums would.
func (ci *ClusterInfo) Fit(req *Resources) (int64, corev1.ResourceName) {
	n, limiting := ci.Available.Fit(req)
	if len(ci.Nodes) == 0 || req.IsZero() {
		return n, limiting
	}
	var perNode int64
	for i := range ci.Nodes {
		g := &ci.Nodes[i]
		m, _ := g.Free.Fit(req)
		// m is bounded by the node's free pods; keep the sum bounded too.
		perNode = min(perNode+g.Count*m, core.Unlimited)
	}
	if perNode < n {
		return perNode, ResourceNodeRoom
	}
	return n, limiting
}

// clone copies the slices a snapshot indexes, so callers of NewSnapshot
// can reuse their input without changing the snapshot.
func (ci ClusterInfo) clone() ClusterInfo {
	// What a snapshot derived for it is the new snapshot's to derive: a
	// ClusterInfo taken from another snapshot must not share (and have
	// overwritten) that one's API bits or taint IDs.
	ci.index, ci.apiBits, ci.taintIDs = 0, nil, nil
	ci.Labels = maps.Clone(ci.Labels)
	ci.Taints = slices.Clone(ci.Taints)
	ci.APIs = slices.Clone(ci.APIs)
	ci.Available.Scalars = slices.Clone(ci.Available.Scalars)
	ci.Available.sortScalars()
	ci.Nodes = slices.Clone(ci.Nodes)
	for i := range ci.Nodes {
		ci.Nodes[i].Free.Scalars = slices.Clone(ci.Nodes[i].Free.Scalars)
		ci.Nodes[i].Free.sortScalars()
	}
	return ci
}
