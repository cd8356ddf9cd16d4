package core

import (
	"container/heap"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// giveEachOne makes sure every selected cluster of a Divided placement with
// spread constraints receives a replica, so the constraints selection met
// hold on the clusters that actually run the workload (a split that put
// every replica in one of two selected regions would not spread at all).
// Selection never picks more clusters than replicas, so a cluster with two
// or more always exists to give one up. Donors are those that gained the
// most over their previous replicas (a Steady scale-up then keeps what
// exists when it can), then those with the most, then by name. targets and
// selected (indices into cands) are sorted by name.
func giveEachOne(targets []workv1alpha1.TargetCluster, cands []Candidate, selected []int32) []workv1alpha1.TargetCluster {
	if len(targets) == len(selected) {
		return targets
	}
	d := &donors{ts: make([]workv1alpha1.TargetCluster, len(selected)), prev: make([]int32, len(selected))}
	t := 0
	for k, i := range selected {
		c := &cands[i]
		d.ts[k].Name, d.prev[k] = c.Name, max(c.Previous, 0)
		if t < len(targets) && targets[t].Name == c.Name {
			d.ts[k].Replicas = targets[t].Replicas
			t++
		}
		if d.ts[k].Replicas > 1 {
			d.idx = append(d.idx, k)
		}
	}
	heap.Init(d)
	for k := range d.ts {
		if d.ts[k].Replicas > 0 || d.Len() == 0 {
			continue
		}
		from := d.idx[0]
		d.ts[from].Replicas--
		d.ts[k].Replicas = 1
		if d.ts[from].Replicas > 1 {
			heap.Fix(d, 0)
		} else {
			heap.Pop(d)
		}
	}
	return slices.DeleteFunc(d.ts, func(t workv1alpha1.TargetCluster) bool { return t.Replicas == 0 })
}

// donors is a heap of the targets that may give up a replica.
type donors struct {
	ts   []workv1alpha1.TargetCluster
	prev []int32
	idx  []int
}

func (h *donors) Len() int { return len(h.idx) }
func (h *donors) Less(a, b int) bool {
	i, j := h.idx[a], h.idx[b]
	gi, gj := max(h.ts[i].Replicas-h.prev[i], 0), max(h.ts[j].Replicas-h.prev[j], 0)
	switch {
	case gi != gj:
		return gi > gj
	case h.ts[i].Replicas != h.ts[j].Replicas:
		return h.ts[i].Replicas > h.ts[j].Replicas
	}
	return h.ts[i].Name < h.ts[j].Name
}
func (h *donors) Swap(a, b int) { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }
func (h *donors) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *donors) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
