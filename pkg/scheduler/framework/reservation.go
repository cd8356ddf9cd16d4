package framework

import (
	"cmp"
	"slices"
)

// Reservation is room a cluster will lose but does not report yet:
// Replicas replicas, each requesting Request, that the scheduler assigned
// there and the cluster's resource summary does not include (replicas in
// flight).
type Reservation struct {
	Request  Resources
	Replicas int64
}

// WithReservations returns a snapshot of the same fleet in which each
// named cluster has its reservations' room taken: from Available, the
// reservations' requests summed (floored at zero), and from the node model
// one replica at a time on the node with the most room for it, as the
// member's scheduler spreads pods by default. s is not changed and shares
// its indexes with the result; a cluster the snapshot does not hold is
// ignored. The result depends on the reservations, not on the map's order.
func (s *Snapshot) WithReservations(byCluster map[string][]Reservation) *Snapshot {
	if len(byCluster) == 0 {
		return s
	}
	out := *s
	out.clusters = slices.Clone(s.clusters)
	for name, rs := range byCluster {
		i, ok := s.byName[name]
		if !ok {
			continue
		}
		ci := &out.clusters[i]
		ci.Available.Scalars = slices.Clone(ci.Available.Scalars)
		ci.Nodes = cloneNodes(ci.Nodes)
		for _, r := range rs {
			if r.Replicas <= 0 || r.Request.IsZero() {
				continue
			}
			ci.Available.take(&r.Request, r.Replicas)
			ci.Nodes = takeFromNodes(ci.Nodes, &r.Request, r.Replicas)
		}
	}
	return &out
}

func cloneNodes(nodes []NodeRoom) []NodeRoom {
	out := slices.Clone(nodes)
	for i := range out {
		out[i].Free.Scalars = slices.Clone(out[i].Free.Scalars)
	}
	return out
}

// take subtracts n replicas of req (each also one pod), floored at zero.
func (r *Resources) take(req *Resources, n int64) {
	r.MilliCPU = max(0, r.MilliCPU-n*req.MilliCPU)
	r.Memory = max(0, r.Memory-n*req.Memory)
	r.Pods = max(0, r.Pods-n)
	for i := range r.Scalars {
		r.Scalars[i].Value = max(0, r.Scalars[i].Value-n*req.scalar(r.Scalars[i].Name))
	}
}

// takeFromNodes places n replicas of req on the node model, one per node
// of the group where most replicas still fit (the first such group on a
// tie, groups keeping their order), as many nodes of it at once as there
// are replicas left; those nodes split off into a group of their own. A
// replica that fits nowhere takes nothing: the summary's sums still count
// it.
func takeFromNodes(nodes []NodeRoom, req *Resources, n int64) []NodeRoom {
	for n > 0 {
		best, bestFit := -1, int64(0)
		for i := range nodes {
			if f, _ := nodes[i].Free.Fit(req); f > bestFit {
				best, bestFit = i, f
			}
		}
		if best < 0 {
			return nodes
		}
		k := min(n, nodes[best].Count)
		n -= k
		used := NodeRoom{Count: k, Free: nodes[best].Free}
		used.Free.Scalars = slices.Clone(used.Free.Scalars)
		used.Free.take(req, 1)
		if nodes[best].Count == k {
			nodes[best] = used
			continue
		}
		nodes[best].Count -= k
		nodes = slices.Insert(nodes, best+1, used)
	}
	return nodes
}

// SortReservations orders reservations so that WithReservations gives the
// same result whatever order they were collected in: larger requests
// first, then by replicas.
func SortReservations(rs []Reservation) {
	slices.SortStableFunc(rs, func(a, b Reservation) int {
		return cmp.Or(cmp.Compare(b.Request.MilliCPU, a.Request.MilliCPU), cmp.Compare(b.Request.Memory, a.Request.Memory),
			cmp.Compare(b.Replicas, a.Replicas))
	})
}
