package scenario

import (
	"slices"
	"strings"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Room is a scenario's fleet as its workloads use it up, one after another
// (shepherd plan --in-order): Take removes a placed workload's replicas
// from the clusters it went to, so that the workloads after it see less
// room. The snapshots it hands out are never changed; each Take that takes
// something builds a new one.
type Room struct {
	// clusters as loaded (never indexed by a snapshot), sorted by name:
	// clusters[i] is snap.At(i).
	clusters []framework.ClusterInfo
	snap     *framework.Snapshot
}

// Room starts from the fleet as given. s must come from Load or Parse.
func (s *Scenario) Room() *Room {
	if len(s.clusters) != s.Snapshot.Len() {
		panic("scenario: Room needs a Scenario from Load or Parse")
	}
	clusters := slices.Clone(s.clusters)
	slices.SortFunc(clusters, func(a, b framework.ClusterInfo) int { return strings.Compare(a.Name, b.Name) })
	return &Room{clusters: clusters, snap: s.Snapshot}
}

// Snapshot is the fleet with the room the workloads taken so far used.
func (r *Room) Snapshot() *framework.Snapshot { return r.snap }

// Take removes the room w's placement uses: on each target cluster, the
// replicas it gains over w.Previous (replicas already running there are
// part of the cluster's reported room), each requesting w.Request and one
// pod, with framework.ClusterInfo.Take; for a workload of several pod
// templates, each component's replicas it gains there, in order, each
// with the component's request. Replicas a target loses give no room back:
// where they ran is not known. Targets outside the fleet and Unscheduled
// targets take nothing.
func (r *Room) Take(w *framework.Workload, targets []workv1alpha1.TargetCluster) error {
	changed := false
	for _, t := range targets {
		i, ok := r.snap.Index(t.Name)
		if t.State == workv1alpha1.TargetUnscheduled || !ok {
			continue
		}
		// NewSnapshot copied what it keeps: r.clusters is ours to change.
		if grow := int64(t.Replicas) - previousReplicas(w.Previous, t.Name); grow > 0 {
			r.clusters[i] = r.clusters[i].Take(&w.Request, grow)
			changed = true
		}
		held := w.HeldComponents(t.Name)
		for _, tc := range t.Components {
			k := slices.IndexFunc(w.Components, func(c framework.Component) bool { return c.Name == tc.Name })
			if grow := int64(tc.Replicas) - int64(held[tc.Name]); k >= 0 && grow > 0 {
				r.clusters[i] = r.clusters[i].Take(&w.Components[k].Request, grow)
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	snap, err := framework.NewSnapshot(r.clusters)
	if err != nil {
		return err
	}
	r.snap = snap
	return nil
}

func previousReplicas(prev []workv1alpha1.TargetCluster, name string) int64 {
	for _, p := range prev {
		if p.Name == name && p.State != workv1alpha1.TargetUnscheduled {
			return int64(p.Replicas)
		}
	}
	return 0
}
