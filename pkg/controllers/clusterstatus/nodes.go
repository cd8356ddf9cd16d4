package clusterstatus

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// The node model: how much room each node has left, so that the scheduler
// counts how many replicas fit node by node. A member whose summed free
// CPU says 9 but whose nodes have 1.5 CPU each takes 6 one-CPU replicas,
// not 9: a replica never spans nodes.
//
// It must stay small whatever the member's size. Nodes with the same room
// (the usual case: a node pool of one shape, empty or equally loaded) form
// one group. When there are more distinct rooms than
// clusterv1alpha1.MaxNodeGroups, the nodes are sorted by room and cut
// into that many runs of consecutive nodes, each run a group holding the
// least room of its nodes resource by resource. The model then
// underestimates, never overestimates: a placement that the model says
// fits does fit.

// nodeRoom is one node's free resources.
type nodeRoom = corev1.ResourceList

// freeRoom is allocatable minus the requests of the node's unfinished
// pods, each pod also taking one "pods"; floored at zero.
func freeRoom(allocatable corev1.ResourceList, pods []corev1.ResourceList) nodeRoom {
	free := allocatable.DeepCopy()
	for _, req := range pods {
		for name, q := range req {
			if f, ok := free[name]; ok {
				f.Sub(q)
				free[name] = f
			}
		}
		if f, ok := free[corev1.ResourcePods]; ok {
			f.Sub(*resource.NewQuantity(1, resource.DecimalSI))
			free[corev1.ResourcePods] = f
		}
	}
	for name, q := range free {
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		// Canonical form, so that equal rooms compare and print equal.
		free[name] = resource.MustParse(q.String())
	}
	return free
}

// takeUnbound takes from rooms what the pods not bound to a node yet will
// take once the member's scheduler binds them: the summed room leaves them
// out already (allocating), and the node model must too, or a burst's
// replicas the member has created but not bound would leave their room
// free node by node. Each pod, largest request first, goes to the node
// with the most room that holds it (cpu, then memory, then pods; equal
// rooms in compareRooms order), as kube-scheduler's default scoring
// spreads pods; a pod no node holds stays Pending and takes nothing. The
// result depends on the requests, not on the order of the pods or the
// rooms. It sorts rooms.
func takeUnbound(rooms []nodeRoom, pending []corev1.ResourceList) {
	if len(pending) == 0 || len(rooms) == 0 {
		return
	}
	slices.SortStableFunc(rooms, compareRooms)
	sorted := slices.Clone(pending)
	slices.SortStableFunc(sorted, func(a, b corev1.ResourceList) int { return compareRooms(b, a) })
	// The ranking key of each room, kept up to date as pods land.
	type key struct{ cpu, memory, pods int64 }
	keyOf := func(r nodeRoom) key {
		return key{r.Cpu().MilliValue(), r.Memory().Value(), r.Pods().Value()}
	}
	keys := make([]key, len(rooms))
	for i, r := range rooms {
		keys[i] = keyOf(r)
	}
	roomier := func(a, b key) bool {
		return cmp.Or(cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.memory, b.memory), cmp.Compare(a.pods, b.pods)) > 0
	}
	touched := make([]bool, len(rooms))
	one := resource.NewQuantity(1, resource.DecimalSI)
	for _, req := range sorted {
		best := -1
		for i, r := range rooms {
			if (best < 0 || roomier(keys[i], keys[best])) && holds(r, req) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		r := rooms[best]
		for name, q := range req {
			if f, ok := r[name]; ok {
				f.Sub(q)
				r[name] = f
			}
		}
		if f, ok := r[corev1.ResourcePods]; ok {
			f.Sub(*one)
			r[corev1.ResourcePods] = f
		}
		keys[best], touched[best] = keyOf(r), true
	}
	for i, r := range rooms {
		if !touched[i] {
			continue
		}
		for name, q := range r {
			// Canonical form, as freeRoom's, so that equal rooms group.
			r[name] = resource.MustParse(q.String())
		}
	}
}

// holds reports whether a node with room r takes a pod requesting req:
// every resource it asks for is there, and one more pod.
func holds(r nodeRoom, req corev1.ResourceList) bool {
	for name, q := range req {
		if q.Sign() <= 0 {
			continue
		}
		if f, ok := r[name]; !ok || f.Cmp(q) < 0 {
			return false
		}
	}
	if f, ok := r[corev1.ResourcePods]; ok && f.Sign() <= 0 {
		return false
	}
	return true
}

// nodeGroups groups rooms into at most max groups (see above). The result
// is deterministic: it depends on the rooms, not on their order.
func nodeGroups(rooms []nodeRoom, max int) []clusterv1alpha1.NodeGroup {
	sorted := slices.Clone(rooms)
	slices.SortStableFunc(sorted, compareRooms)
	var distinct []clusterv1alpha1.NodeGroup
	for _, r := range sorted {
		if n := len(distinct); n > 0 && equality.Semantic.DeepEqual(distinct[n-1].Free, r) {
			distinct[n-1].Count++
			continue
		}
		distinct = append(distinct, clusterv1alpha1.NodeGroup{Count: 1, Free: r})
	}
	if len(distinct) <= max {
		return distinct
	}
	// Cut the sorted distinct rooms into max runs of about equal length.
	out := make([]clusterv1alpha1.NodeGroup, 0, max)
	for i := range max {
		lo, hi := i*len(distinct)/max, (i+1)*len(distinct)/max
		g := clusterv1alpha1.NodeGroup{Free: distinct[lo].Free.DeepCopy()}
		for _, d := range distinct[lo:hi] {
			g.Count += d.Count
			g.Free = leastOf(g.Free, d.Free)
		}
		out = append(out, g)
	}
	return out
}

// leastOf is the smaller of a and b, resource by resource; a resource
// missing from either is missing (none of it is sure to be there).
func leastOf(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok {
			continue
		}
		if qb.Cmp(qa) < 0 {
			qa = qb
		}
		out[name] = qa
	}
	return out
}

// compareRooms orders rooms by cpu, memory, pods, then the other resources
// by name: nodes of a pool end up next to each other.
func compareRooms(a, b nodeRoom) int {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if c := compareQuantity(a, b, name); c != 0 {
			return c
		}
	}
	names := make([]corev1.ResourceName, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if c := compareQuantity(a, b, n); c != 0 {
			return c
		}
	}
	return 0
}

// compareQuantity compares one resource; a missing one sorts first.
func compareQuantity(a, b nodeRoom, name corev1.ResourceName) int {
	qa, oka := a[name]
	qb, okb := b[name]
	switch {
	case !oka || !okb:
		return cmp.Compare(boolInt(oka), boolInt(okb))
	default:
		return qa.Cmp(qb)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
