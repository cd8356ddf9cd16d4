package scenario

import (
	"cmp"
	"slices"
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// HasWorkloadAffinity reports whether any workload of the scenario is in a
// workload affinity group: its placement then depends on the others'.
func (s *Scenario) HasWorkloadAffinity() bool {
	return slices.ContainsFunc(s.Workloads, func(w *framework.Workload) bool {
		return w.AffinityGroup != nil || w.AntiAffinityGroup != nil
	})
}

// WithPeers returns a copy of w whose workload affinity groups hold the
// scenario's other workloads of the same namespace and group, as the
// scheduling controller finds them on a hub: each runs on the clusters in
// placed (what the plan gave it so far) or, when the plan has not placed
// it, on its binding's current targets. w itself is left as it is.
func (s *Scenario) WithPeers(w *framework.Workload, placed map[*framework.Workload][]string) *framework.Workload {
	if w.AffinityGroup == nil && w.AntiAffinityGroup == nil {
		return w
	}
	c := *w
	group := func(g *framework.PeerGroup, of func(*framework.Workload) *framework.PeerGroup) *framework.PeerGroup {
		if g == nil {
			return nil
		}
		out := &framework.PeerGroup{Name: g.Name}
		for _, u := range s.Workloads {
			if u == w || u.Namespace != w.Namespace || of(u) == nil || of(u).Name != g.Name {
				continue
			}
			clusters, ok := placed[u]
			if !ok {
				clusters = activeNames(u.Previous)
			}
			out.Peers = append(out.Peers, framework.Peer{Name: u.Kind + "/" + u.Name, Clusters: clusters})
		}
		slices.SortStableFunc(out.Peers, func(a, b framework.Peer) int { return cmp.Compare(a.Name, b.Name) })
		return out
	}
	c.AffinityGroup = group(w.AffinityGroup, func(u *framework.Workload) *framework.PeerGroup { return u.AffinityGroup })
	c.AntiAffinityGroup = group(w.AntiAffinityGroup, func(u *framework.Workload) *framework.PeerGroup { return u.AntiAffinityGroup })
	return &c
}

// activeNames are the names of the targets not Unscheduled, sorted.
func activeNames(targets []workv1alpha1.TargetCluster) []string {
	var out []string
	for _, t := range targets {
		if t.State != workv1alpha1.TargetUnscheduled {
			out = append(out, t.Name)
		}
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
