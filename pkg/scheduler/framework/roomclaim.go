package framework

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// RoomClaimError says why the room c's status reports is beyond what the
// cluster may claim (c.Spec.RoomBounds over the defaults), nil when it is
// within. The status of a Pull cluster is written by its agent, so it is
// checked before anything is counted from it:
//   - at most MaxNodes nodes, Ready nodes no more than nodes;
//   - the node model's groups hold no more nodes than the Ready nodes (when
//     reported) nor than MaxNodes, counted without overflow;
//   - no group's node holds more of a resource than MaxNodeRoom;
//   - the allocatable sums hold no more than MaxNodeRoom times the Ready
//     nodes (MaxNodes when not reported).
//
// Resources are compared as floating-point numbers, which cannot
// overflow whatever a status claims.
func RoomClaimError(c *clusterv1alpha1.Cluster) error {
	rs := c.Status.ResourceSummary
	maxNodes := int64(clusterv1alpha1.DefaultMaxNodes)
	perNode := clusterv1alpha1.DefaultMaxNodeRoom()
	if b := c.Spec.RoomBounds; b != nil {
		if b.MaxNodes != nil {
			maxNodes = int64(*b.MaxNodes)
		}
		for name, q := range b.MaxNodeRoom {
			perNode[name] = q
		}
	}
	ready := maxNodes
	if ns := c.Status.NodeSummary; ns != nil {
		switch {
		case int64(ns.TotalNum) > maxNodes:
			return fmt.Errorf("status.nodeSummary.totalNum %d is more than the %d nodes the cluster may report (spec.roomBounds.maxNodes)", ns.TotalNum, maxNodes)
		case ns.ReadyNum > ns.TotalNum || ns.ReadyNum < 0:
			return fmt.Errorf("status.nodeSummary.readyNum %d is not within 0 and totalNum %d", ns.ReadyNum, ns.TotalNum)
		}
		ready = int64(ns.ReadyNum)
	}
	if rs == nil {
		return nil
	}
	var modelled int64
	for i, g := range rs.Nodes {
		modelled += int64(g.Count) // at most 64 groups of int32: no overflow
		if modelled > ready {
			return fmt.Errorf("status.resourceSummary.nodes holds %d nodes or more by group %d, more than the %d Ready nodes the cluster may report", modelled, i, ready)
		}
		if err := within(g.Free, perNode, 1, fmt.Sprintf("status.resourceSummary.nodes[%d].free", i), "one node"); err != nil {
			return err
		}
	}
	return within(rs.Allocatable, perNode, ready, "status.resourceSummary.allocatable", fmt.Sprintf("%d Ready nodes", ready))
}

// within checks every bounded resource of have against n times perNode.
func within(have, perNode corev1.ResourceList, n int64, field, what string) error {
	for _, name := range slices.Sorted(maps.Keys(perNode)) {
		q, ok := have[name]
		if !ok {
			continue
		}
		limit := perNode[name]
		if q.AsApproximateFloat64() > limit.AsApproximateFloat64()*float64(n) {
			return fmt.Errorf("%s.%s %s is more than %s of %s may hold (spec.roomBounds.maxNodeRoom.%s %s)", field, name, q.String(), what, name, name, limit.String())
		}
	}
	return nil
}
