package scenario

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Fleet is the fleet scenario format of docs/fleet-scenarios.md: one
// JSON object (or a YAML document of kind Scenario) with clusters and
// workloads described by plain numbers rather than API objects.
type Fleet struct {
	Name      string          `json:"name"`
	Clusters  []FleetCluster  `json:"clusters"`
	Workloads []FleetWorkload `json:"workloads"`
}

// FleetCluster is a cluster of a Fleet.
type FleetCluster struct {
	Name     string            `json:"name"`
	Provider string            `json:"provider"`
	Region   string            `json:"region"`
	Zone     string            `json:"zone"`
	Labels   map[string]string `json:"labels"`
	Taints   []corev1.Taint    `json:"taints"`
	// Available resources: cpu in millicores, memory in MiB, pods as a
	// count; other names are extended resources in their base unit.
	Available map[string]int64 `json:"available"`
	// APIs are the enabled resources, "group/version/Kind".
	APIs []string `json:"apis"`
	// Nodes, when given, is the room left node by node, in the units of
	// Available: a replica then never spans nodes (see the Cluster
	// status's node model). Without it only Available counts.
	Nodes []FleetNodes `json:"nodes,omitempty"`
}

// FleetNodes is Count nodes with Free room left each.
type FleetNodes struct {
	Count int64            `json:"count"`
	Free  map[string]int64 `json:"free"`
}

// FleetWorkload is a workload of a Fleet.
type FleetWorkload struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Replicas   int32  `json:"replicas"`
	// Request per replica: cpu in millicores, memory in MiB.
	Request   map[string]int64 `json:"request"`
	Placement FleetPlacement   `json:"placement"`
}

// FleetPlacement is the compact placement of a FleetWorkload.
type FleetPlacement struct {
	// ReplicaScheduling: Duplicated, StaticWeighted, DynamicWeighted or Aggregated.
	ReplicaScheduling string              `json:"replicaScheduling"`
	ClusterNames      []string            `json:"clusterNames"`
	LabelSelector     map[string]string   `json:"labelSelector"`
	ExcludeClusters   []string            `json:"excludeClusters"`
	Tolerations       []corev1.Toleration `json:"tolerations"`
	Spread            []FleetSpread       `json:"spread"`
	StaticWeights     []FleetWeight       `json:"staticWeights"`
}

// FleetSpread bounds the number of groups (cluster, region, zone or provider).
type FleetSpread struct {
	By  string `json:"by"`
	Min int32  `json:"min"`
	Max int32  `json:"max"`
}

// FleetWeight gives the matching clusters a static weight.
type FleetWeight struct {
	LabelSelector map[string]string `json:"labelSelector"`
	ClusterNames  []string          `json:"clusterNames"`
	Weight        int64             `json:"weight"`
}

const mebibyte = 1 << 20

// resources converts a cpu/memory(MiB)/pods map.
func resources(m map[string]int64) framework.Resources {
	var r framework.Resources
	for name, v := range m {
		switch corev1.ResourceName(name) {
		case corev1.ResourceCPU:
			r.MilliCPU = v
		case corev1.ResourceMemory:
			r.Memory = v * mebibyte
		case corev1.ResourcePods:
			r.Pods = v
		default:
			r.Scalars = append(r.Scalars, framework.ScalarResource{Name: corev1.ResourceName(name), Value: v})
		}
	}
	// Sorted by name, as Resources wants them (Fit walks two lists
	// together): a map gives them in any order.
	slices.SortFunc(r.Scalars, func(a, b framework.ScalarResource) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return r
}

// clusterInfo converts a fleet cluster. A scenario describes an observed
// fleet, so every cluster counts as probed and ready: an empty apis list
// means the cluster serves nothing.
func (c *FleetCluster) clusterInfo() (framework.ClusterInfo, error) {
	var nodes []framework.NodeRoom
	for i, n := range c.Nodes {
		if n.Count < 1 {
			return framework.ClusterInfo{}, fmt.Errorf("nodes[%d].count %d: give one node or more, or leave the entry out", i, n.Count)
		}
		for name, v := range n.Free {
			if v < 0 {
				return framework.ClusterInfo{}, fmt.Errorf("nodes[%d].free.%s %d is negative: give the room left, 0 or more", i, name, v)
			}
		}
		nodes = append(nodes, framework.NodeRoom{Count: n.Count, Free: resources(n.Free)})
	}
	return framework.ClusterInfo{
		Name:      c.Name,
		Provider:  c.Provider,
		Region:    c.Region,
		Zone:      c.Zone,
		Labels:    c.Labels,
		Taints:    c.Taints,
		APIs:      c.APIs,
		Available: resources(c.Available),
		Nodes:     nodes,
		Ready:     metav1.ConditionTrue,
		Probed:    true,
	}, nil
}

// workload converts a fleet workload.
func (fw *FleetWorkload) workload() (*framework.Workload, error) {
	if fw.Replicas < 0 {
		return nil, fmt.Errorf("replicas %d is negative", fw.Replicas)
	}
	p, err := fw.Placement.placement()
	if err != nil {
		return nil, fmt.Errorf("placement.%w", err)
	}
	return &framework.Workload{
		Namespace:  fw.Namespace,
		Name:       fw.Name,
		APIVersion: fw.APIVersion,
		Kind:       fw.Kind,
		Replicas:   fw.Replicas,
		Request:    resources(fw.Request),
		Placement:  p,
	}, nil
}

// placement maps the compact placement onto Shepherd's API. API validation
// is not applied (a scenario may spread by region without a cluster
// constraint, for instance): the scheduler must cope with any placement.
func (fp *FleetPlacement) placement() (*policyv1alpha1.Placement, error) {
	p := &policyv1alpha1.Placement{ClusterTolerations: fp.Tolerations}
	if len(fp.ClusterNames) > 0 || len(fp.LabelSelector) > 0 || len(fp.ExcludeClusters) > 0 {
		p.ClusterAffinity = &policyv1alpha1.ClusterAffinity{
			ClusterNames:  fp.ClusterNames,
			LabelSelector: matchLabels(fp.LabelSelector),
			Exclude:       fp.ExcludeClusters,
		}
	}
	rs, err := fp.replicaScheduling()
	if err != nil {
		return nil, err
	}
	p.ReplicaScheduling = rs
	for i, s := range fp.Spread {
		switch f := policyv1alpha1.SpreadFieldValue(s.By); f {
		case policyv1alpha1.SpreadByFieldCluster, policyv1alpha1.SpreadByFieldRegion,
			policyv1alpha1.SpreadByFieldZone, policyv1alpha1.SpreadByFieldProvider:
			c := policyv1alpha1.SpreadConstraint{SpreadByField: f, MinGroups: max(s.Min, 1)}
			if s.Max > 0 {
				c.MaxGroups = &s.Max
			}
			p.SpreadConstraints = append(p.SpreadConstraints, c)
		default:
			return nil, fmt.Errorf("spread[%d].by %q: want cluster, region, zone or provider", i, s.By)
		}
	}
	return p, nil
}

func (fp *FleetPlacement) replicaScheduling() (*policyv1alpha1.ReplicaSchedulingStrategy, error) {
	divided := func(pref policyv1alpha1.ReplicaDivisionPreference, w *policyv1alpha1.ClusterPreferences) *policyv1alpha1.ReplicaSchedulingStrategy {
		return &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: pref,
			WeightPreference:          w,
		}
	}
	switch fp.ReplicaScheduling {
	case "Duplicated":
		return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}, nil
	case "Aggregated":
		return divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, nil), nil
	case "DynamicWeighted":
		return divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			&policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}), nil
	case "StaticWeighted":
		var prefs *policyv1alpha1.ClusterPreferences
		if len(fp.StaticWeights) > 0 {
			prefs = &policyv1alpha1.ClusterPreferences{}
			for _, w := range fp.StaticWeights {
				prefs.StaticWeightList = append(prefs.StaticWeightList, policyv1alpha1.StaticClusterWeight{
					TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: matchLabels(w.LabelSelector), ClusterNames: w.ClusterNames},
					Weight:        w.Weight,
				})
			}
		}
		return divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, prefs), nil
	}
	return nil, fmt.Errorf("replicaScheduling %q: want Duplicated, StaticWeighted, DynamicWeighted or Aggregated", fp.ReplicaScheduling)
}

func matchLabels(m map[string]string) *metav1.LabelSelector {
	if len(m) == 0 {
		return nil
	}
	return &metav1.LabelSelector{MatchLabels: m}
}
