package dashboard

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Unset names a provider, region or zone a cluster does not set.
const Unset = "(unset)"

// FleetView is the fleet page: clusters grouped by provider, region and
// zone, each group and cluster in name order (Unset last).
type FleetView struct {
	Providers []ProviderGroup
	// Clusters are all cards in the order the groups show them.
	Clusters []*ClusterCard
	Ready    int
	// Attention counts clusters that are not Ready or carry taints.
	Attention int
}

// ProviderGroup is one provider's regions.
type ProviderGroup struct {
	Name    string
	Regions []RegionGroup
}

// RegionGroup is one region's zones.
type RegionGroup struct {
	Name  string
	Zones []ZoneGroup
}

// ZoneGroup is one zone's clusters.
type ZoneGroup struct {
	Name     string
	Clusters []*ClusterCard
}

// ClusterCard is one cluster as the pages show it.
type ClusterCard struct {
	Name string
	Mode string
	// Provider, Region and Zone of the cluster, Unset when empty.
	Provider, Region, Zone string
	// Ready is the Ready condition's status: True, False or Unknown.
	Ready       string
	ReadyReason string
	Taints      []string
	// CPU and memory: allocated (bound and pending pods' requests) and
	// allocatable; zero allocatable means the cluster reports none.
	CPUUsed, CPUAllocatable int64 // millicores
	MemUsed, MemAllocatable int64 // bytes
	Workloads               int
	Replicas                int64
	// Placed is the replicas of the workload a workload page highlights;
	// Highlight is true when the workload targets this cluster.
	Placed    int32
	Highlight bool
	// Nodes is the cluster's node model: the room left node by node.
	Nodes NodeModel
}

// Attention is true for a cluster that is not Ready or is tainted.
func (c *ClusterCard) Attention() bool { return c.Ready != "True" || len(c.Taints) > 0 }

// CPUFraction is the allocated share of allocatable CPU, 0..1.
func (c *ClusterCard) CPUFraction() float64 { return fraction(c.CPUUsed, c.CPUAllocatable) }

// MemFraction is the allocated share of allocatable memory, 0..1.
func (c *ClusterCard) MemFraction() float64 { return fraction(c.MemUsed, c.MemAllocatable) }

// State is a short word for the cluster's state: Ready, NotReady, Unknown,
// each followed by ", tainted" when it carries taints.
func (c *ClusterCard) State() string {
	s := "Ready"
	switch c.Ready {
	case "False":
		s = "NotReady"
	case "True":
	default:
		s = "Unknown"
	}
	if len(c.Taints) > 0 {
		s += ", tainted"
	}
	return s
}

func fraction(used, total int64) float64 {
	if total <= 0 {
		return 0
	}
	f := float64(used) / float64(total)
	if f > 1 {
		return 1
	}
	return f
}

// BuildFleet groups the snapshot's clusters and counts what each holds.
// highlight, when set, marks the targets of that binding.
func BuildFleet(s *Snapshot, highlight *Binding) FleetView {
	cards := make(map[string]*ClusterCard, len(s.Clusters))
	list := make([]*ClusterCard, 0, len(s.Clusters))
	for _, c := range s.Clusters {
		card := newCard(c)
		cards[c.Name] = card
		list = append(list, card)
	}
	for _, b := range s.Bindings {
		for _, t := range b.Obj.GetBindingSpec().Clusters {
			if t.State == workv1alpha1.TargetUnscheduled {
				continue
			}
			if card := cards[t.Name]; card != nil {
				card.Workloads++
				card.Replicas += int64(t.Replicas)
			}
		}
	}
	if highlight != nil {
		for _, t := range highlight.Obj.GetBindingSpec().Clusters {
			if card := cards[t.Name]; card != nil && t.State != workv1alpha1.TargetUnscheduled {
				card.Highlight, card.Placed = true, t.Replicas
			}
		}
	}
	return group(list)
}

func newCard(c *clusterv1alpha1.Cluster) *ClusterCard {
	card := &ClusterCard{
		Name: c.Name, Mode: string(c.Spec.SyncMode), Ready: "Unknown",
		Provider: orUnset(c.Spec.Provider), Region: orUnset(c.Spec.Region), Zone: orUnset(c.Spec.Zone),
	}
	if card.Mode == "" {
		card.Mode = string(clusterv1alpha1.Push)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, "Ready"); cond != nil {
		card.Ready, card.ReadyReason = string(cond.Status), cond.Reason
	}
	for _, t := range c.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		card.Taints = append(card.Taints, s+":"+string(t.Effect))
	}
	if rs := c.Status.ResourceSummary; rs != nil {
		card.CPUAllocatable = rs.Allocatable.Cpu().MilliValue()
		card.MemAllocatable = rs.Allocatable.Memory().Value()
		card.CPUUsed = milli(rs.Allocated, corev1.ResourceCPU) + milli(rs.Allocating, corev1.ResourceCPU)
		card.MemUsed = value(rs.Allocated, corev1.ResourceMemory) + value(rs.Allocating, corev1.ResourceMemory)
		card.Nodes = NodeModelOf(rs.Nodes, ShownNodeGroups)
	}
	return card
}

func milli(l corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	return q.MilliValue()
}

func value(l corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	return q.Value()
}

// group sorts the cards into provider, region and zone groups. Each level
// is in name order with Unset last, clusters by name within a zone: the
// picture is the same for the same fleet.
func group(cards []*ClusterCard) FleetView {
	sort.Slice(cards, func(i, j int) bool {
		a, b := cards[i], cards[j]
		switch {
		case a.Provider != b.Provider:
			return lessName(a.Provider, b.Provider)
		case a.Region != b.Region:
			return lessName(a.Region, b.Region)
		case a.Zone != b.Zone:
			return lessName(a.Zone, b.Zone)
		}
		return a.Name < b.Name
	})
	v := FleetView{Clusters: cards}
	for _, c := range cards {
		if c.Ready == "True" {
			v.Ready++
		}
		if c.Attention() {
			v.Attention++
		}
		if n := len(v.Providers); n == 0 || v.Providers[n-1].Name != c.Provider {
			v.Providers = append(v.Providers, ProviderGroup{Name: c.Provider})
		}
		p := &v.Providers[len(v.Providers)-1]
		if n := len(p.Regions); n == 0 || p.Regions[n-1].Name != c.Region {
			p.Regions = append(p.Regions, RegionGroup{Name: c.Region})
		}
		r := &p.Regions[len(p.Regions)-1]
		if n := len(r.Zones); n == 0 || r.Zones[n-1].Name != c.Zone {
			r.Zones = append(r.Zones, ZoneGroup{Name: c.Zone})
		}
		z := &r.Zones[len(r.Zones)-1]
		z.Clusters = append(z.Clusters, c)
	}
	return v
}

// orUnset is s, or Unset when s is empty.
func orUnset(s string) string {
	if s == "" {
		return Unset
	}
	return s
}

// lessName orders names with Unset last.
func lessName(a, b string) bool {
	if (a == Unset) != (b == Unset) {
		return b == Unset
	}
	return a < b
}
