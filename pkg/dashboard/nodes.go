package dashboard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// ShownNodeGroups is how many groups of a cluster's node model the pages
// spell out; the rest are counted ("+2 more groups, 9 nodes").
const ShownNodeGroups = 3

// NodeModel is a cluster's node model (status.resourceSummary.nodes) as
// the pages show it: groups of nodes with the same room left, in the
// order the cluster reports them, the first ShownNodeGroups spelled out.
type NodeModel struct {
	// Groups are the first groups, each "6 × 1.5 CPU / 8 GiB / 110 pods":
	// 6 nodes, each with at least that room left.
	Groups []string
	// More groups are left out; they hold MoreNodes nodes.
	More      int
	MoreNodes int64
	// Ignored is true for a malformed model (a group of no nodes, or more
	// than MaxNodeGroups groups), which the scheduler does not use either.
	Ignored bool
}

// Reported is true when the cluster reports a model the scheduler uses.
func (m NodeModel) Reported() bool { return len(m.Groups) > 0 && !m.Ignored }

// MoreText is "+2 more groups, 9 nodes", or "" when every group is shown.
func (m NodeModel) MoreText() string {
	if m.More == 0 {
		return ""
	}
	groups := "groups"
	if m.More == 1 {
		groups = "group"
	}
	nodes := "nodes"
	if m.MoreNodes == 1 {
		nodes = "node"
	}
	return fmt.Sprintf("+%d more %s, %d %s", m.More, groups, m.MoreNodes, nodes)
}

// String is the model on one line: the groups shown, then MoreText.
func (m NodeModel) String() string {
	switch {
	case m.Ignored:
		return "malformed, not used"
	case len(m.Groups) == 0:
		return "not reported"
	}
	parts := slices.Clone(m.Groups)
	if t := m.MoreText(); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

// NodeModelOf summarizes groups, spelling out the first shown of them.
func NodeModelOf(groups []clusterv1alpha1.NodeGroup, shown int) NodeModel {
	if len(groups) > clusterv1alpha1.MaxNodeGroups {
		return NodeModel{Ignored: true}
	}
	var m NodeModel
	for i, g := range groups {
		if g.Count < 1 {
			return NodeModel{Ignored: true}
		}
		if i >= shown {
			m.More++
			m.MoreNodes += int64(g.Count)
			continue
		}
		m.Groups = append(m.Groups, fmt.Sprintf("%d × %s", g.Count, RoomText(g.Free)))
	}
	return m
}

// RoomText writes a node's room as the scheduler reads it: CPU, memory
// and pods always (what a node does not report it has none of), then the
// other resources it has, by name: "1.5 CPU / 8 GiB / 110 pods / 1
// nvidia.com/gpu". Memory and other byte sizes are rounded down, as the
// model is a floor.
func RoomText(l corev1.ResourceList) string {
	parts := []string{
		strconv.FormatFloat(float64(milli(l, corev1.ResourceCPU))/1000, 'f', -1, 64) + " CPU",
		byteText(value(l, corev1.ResourceMemory)),
		strconv.FormatInt(value(l, corev1.ResourcePods), 10) + " pods",
	}
	var names []string
	for name := range l {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourcePods {
			names = append(names, string(name))
		}
	}
	slices.Sort(names)
	for _, name := range names {
		v := value(l, corev1.ResourceName(name))
		switch {
		case v <= 0:
			// None, as for a resource not reported.
		case name == string(corev1.ResourceEphemeralStorage) || strings.HasPrefix(name, corev1.ResourceHugePagesPrefix):
			parts = append(parts, byteText(v)+" "+name)
		default:
			parts = append(parts, strconv.FormatInt(v, 10)+" "+name)
		}
	}
	return strings.Join(parts, " / ")
}

// byteText is b in GiB to one decimal, or in MiB below 1 GiB, rounded
// down: "8 GiB", "7.5 GiB", "512 MiB".
func byteText(b int64) string {
	if b < 1<<30 {
		return strconv.FormatInt(b>>20, 10) + " MiB"
	}
	tenths := b * 10 >> 30
	return strconv.FormatFloat(float64(tenths)/10, 'f', -1, 64) + " GiB"
}

// NodeRoomLimit is set on a Decision when room on any one node limited
// how many of the workload's replicas fit on the cluster: its nodes hold
// fewer than its summed free resources would, because a replica never
// spans nodes.
type NodeRoomLimit struct {
	// Fits is how many replicas the cluster holds node by node (those it
	// has now and those its nodes' room left takes), or -1 when not known
	// (a decision as the scheduler recorded it).
	Fits int64
	// Nodes is the cluster's node model.
	Nodes NodeModel
}

// FitsText is "2 replicas fit node by node", "no replica fits on any
// one node", or "" when Fits is not known.
func (l NodeRoomLimit) FitsText() string {
	switch {
	case l.Fits < 0:
		return ""
	case l.Fits == 0:
		return "no replica fits on any one node"
	case l.Fits == 1:
		return "1 replica fits node by node"
	}
	return fmt.Sprintf("%d replicas fit node by node", l.Fits)
}

// NamesNodeRoom is true when a scheduler's reason names room on any one
// node ("insufficient room on any one node for one replica").
func NamesNodeRoom(reason string) bool {
	return strings.Contains(reason, string(framework.ResourceNodeRoom))
}

// NodeRoomOf says whether room on any one node limited how many replicas
// of w fit on ci, as the scheduler counts them (ClusterInfo.Fit, plus the
// replicas w has there now): when the nodes are what limits the count and
// fewer replicas fit than w has, or when the scheduler's reason says so.
// It is nil otherwise.
func NodeRoomOf(ci *framework.ClusterInfo, c *clusterv1alpha1.Cluster, w *framework.Workload, reason string) *NodeRoomLimit {
	fits, limiting := int64(-1), corev1.ResourceName("")
	if ci != nil && !w.Request.IsZero() {
		fits, limiting = ci.Fit(&w.Request)
		for _, t := range w.Previous {
			if t.Name == ci.Name && t.State != workv1alpha1.TargetUnscheduled {
				fits += int64(t.Replicas)
			}
		}
	}
	if limiting != framework.ResourceNodeRoom || fits >= int64(w.Replicas) {
		if !NamesNodeRoom(reason) {
			return nil
		}
		fits = -1 // the reason says so; the count does not show it
	}
	return &NodeRoomLimit{Fits: fits, Nodes: nodeModelOfCluster(c)}
}

func nodeModelOfCluster(c *clusterv1alpha1.Cluster) NodeModel {
	if c == nil || c.Status.ResourceSummary == nil {
		return NodeModel{}
	}
	return NodeModelOf(c.Status.ResourceSummary.Nodes, ShownNodeGroups)
}
