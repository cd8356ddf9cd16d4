package scheduling

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// lookupPeers fills w's workload affinity groups with the other members
// of b's groups and the clusters they run on, from the cache's
// BindingsByWorkloadAffinityGroup index: one lookup per group, never a
// list of every binding.
//
// A member's clusters are its active targets, or the ones a cycle assumed
// for it and has not seen in the cache yet (the ledger), so that members
// created together and scheduled back to back see each other: cycles run
// one at a time and each assumes its decision before the next starts.
// Members being deleted are left out, as their copies are going away.
// Only ResourceBindings carry groups; a ClusterResourceBinding's are
// ignored.
func (r *Reconciler[T]) lookupPeers(ctx context.Context, b T, w *framework.Workload) error {
	if w.AffinityGroup == nil && w.AntiAffinityGroup == nil {
		return nil
	}
	if _, ok := any(b).(*workv1alpha1.ResourceBinding); !ok {
		w.AffinityGroup, w.AntiAffinityGroup = nil, nil
		return nil
	}
	for _, g := range []struct {
		group *framework.PeerGroup
		key   func(namespace, group string) string
	}{{w.AffinityGroup, index.AffinityGroupKey}, {w.AntiAffinityGroup, index.AntiAffinityGroupKey}} {
		if g.group == nil {
			continue
		}
		list := &workv1alpha1.ResourceBindingList{}
		if err := r.client.List(ctx, list, client.InNamespace(b.GetNamespace()),
			client.MatchingFields{index.BindingsByWorkloadAffinityGroup: g.key(b.GetNamespace(), g.group.Name)}); err != nil {
			return err
		}
		g.group.Peers = r.peersOf(list.Items, b.GetName())
	}
	return nil
}

// peersOf turns the members of a group, but self, into peers sorted by
// name (ties by binding name), whatever order the cache lists them in.
func (r *Reconciler[T]) peersOf(items []workv1alpha1.ResourceBinding, self string) []framework.Peer {
	type member struct {
		binding string
		peer    framework.Peer
	}
	members := make([]member, 0, len(items))
	for i := range items {
		m := &items[i]
		if m.Name == self || m.DeletionTimestamp != nil {
			continue
		}
		clusters, ok := r.fleet.ledger.assumedTargets(ledgerKey(r.kind.Name, m))
		if !ok {
			clusters = activeNames(m.Spec.Clusters)
		}
		members = append(members, member{m.Name, framework.Peer{Name: m.Spec.Resource.Kind + "/" + m.Spec.Resource.Name, Clusters: clusters}})
	}
	slices.SortFunc(members, func(a, b member) int {
		return cmp.Or(strings.Compare(a.peer.Name, b.peer.Name), strings.Compare(a.binding, b.binding))
	})
	out := make([]framework.Peer, len(members))
	for i := range members {
		out[i] = members[i].peer
	}
	return out
}

// activeNames are the names of the active targets, sorted.
func activeNames(targets []workv1alpha1.TargetCluster) []string {
	var out []string
	for _, t := range bindingutil.ActiveTargets(targets) {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}
