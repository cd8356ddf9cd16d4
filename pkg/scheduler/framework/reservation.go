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
// named cluster has its reservations' room taken (ClusterInfo.Take: from
// the sums, and from the node model one replica at a time on the node with
// the most room for it, as the member's scheduler spreads pods by
// default). s is not changed and shares its indexes with the result; a
// cluster the snapshot does not hold is ignored. The result depends on the
// reservations, not on the map's order.
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
		for _, r := range rs {
			if r.Replicas > 0 && !r.Request.IsZero() {
				out.clusters[i] = out.clusters[i].Take(&r.Request, r.Replicas)
			}
		}
	}
	return &out
}

// SortReservations orders reservations totally, so that WithReservations
// gives the same result whatever order they were collected in: larger
// requests first (cpu, memory, then extended resources by name), then more
// replicas.
func SortReservations(rs []Reservation) {
	slices.SortFunc(rs, func(a, b Reservation) int {
		return cmp.Or(compareRoom(&b.Request, &a.Request), cmp.Compare(b.Replicas, a.Replicas))
	})
}
