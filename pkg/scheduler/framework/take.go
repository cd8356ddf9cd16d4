package framework

import (
	"cmp"
	"slices"
	"strings"
)

// Take returns ci with n replicas, each requesting req and one pod, taken
// from its room; ci is not changed (the result has slices of its own for
// what differs). It is how room is taken wherever it is: the replicas in
// flight (WithReservations) and a scenario's workloads placed in order.
//
//   - Available loses n × req of every resource and n pods, floored at 0.
//   - The node model, when there is one, takes the replicas the way
//     kube-scheduler's default scoring (LeastAllocated) spreads pods: one
//     replica at a time on a node of the group with the most room for it,
//     splitting that group into its untouched nodes and the used one. "Most
//     room" is the most replicas of req that still fit on the node; among
//     nodes where as many fit, more free cpu, then memory, then pods, then
//     extended resources by name. Replicas that fit on no node take nothing
//     from the nodes (the scheduler assigns none unless req is zero). The
//     groups come out merged (nodes with the same room form one group) and
//     sorted from the roomiest, so the result does not depend on the
//     order of the groups given.
func (ci ClusterInfo) Take(req *Resources, n int64) ClusterInfo {
	if n <= 0 {
		return ci
	}
	ci.Available = minus(ci.Available, req, n)
	if len(ci.Nodes) > 0 {
		ci.Nodes = takeFromNodes(ci.Nodes, req, n)
	}
	return ci
}

// takeFromNodes places n replicas on a copy of nodes, whole rounds at once
// where one replica at a time would come to the same: a group's untouched
// nodes always rank above its used ones, so the next Count replicas of a
// group that ranks first land one on each of its nodes; and those nodes
// keep ranking first for as many more rounds as they still fit more
// replicas than the runner-up.
func takeFromNodes(nodes []NodeRoom, req *Resources, n int64) []NodeRoom {
	groups := make([]NodeRoom, 0, len(nodes)+1)
	for _, g := range nodes {
		if g.Count > 0 {
			groups = append(groups, NodeRoom{Count: g.Count, Free: canonical(g.Free)})
		}
	}
	groups = merged(groups)
	for n > 0 {
		best, second := -1, -1
		for i := range groups {
			if fitOne(&groups[i].Free, req) < 1 {
				continue
			}
			switch {
			case best < 0 || roomier(&groups[i].Free, &groups[best].Free, req):
				best, second = i, best
			case second < 0 || roomier(&groups[i].Free, &groups[second].Free, req):
				second = i
			}
		}
		if best < 0 {
			break
		}
		g := &groups[best]
		if n < g.Count {
			used := NodeRoom{Count: n, Free: canonical(minus(g.Free, req, 1))}
			g.Count -= n
			groups = append(groups, used)
			n = 0
		} else {
			fit := fitOne(&g.Free, req)
			rounds := fit
			if second >= 0 {
				rounds = min(rounds, max(fit-fitOne(&groups[second].Free, req), 1))
			}
			rounds = min(rounds, n/g.Count)
			g.Free = canonical(minus(g.Free, req, rounds))
			n -= rounds * g.Count
		}
		groups = merged(groups)
	}
	return groups
}

// fitOne is how many replicas of req fit in free: by Resources.Fit, or, for
// a request of nothing, the free pods (every replica is a pod).
func fitOne(free, req *Resources) int64 {
	if req.IsZero() {
		return max(free.Pods, 0)
	}
	n, _ := free.Fit(req)
	return n
}

// roomier reports whether a node with room a ranks before one with room b
// for a replica of req (see Take).
func roomier(a, b, req *Resources) bool {
	if fa, fb := fitOne(a, req), fitOne(b, req); fa != fb {
		return fa > fb
	}
	return compareRoom(a, b) > 0
}

// compareRoom orders rooms by cpu, memory, pods, then extended resources
// by name (a missing one counts as 0); 0 only when they are the same room.
func compareRoom(a, b *Resources) int {
	if c := cmp.Or(cmp.Compare(a.MilliCPU, b.MilliCPU), cmp.Compare(a.Memory, b.Memory), cmp.Compare(a.Pods, b.Pods)); c != 0 {
		return c
	}
	// Both canonical: sorted by name, no zero values.
	for i := 0; ; i++ {
		switch {
		case i == len(a.Scalars) && i == len(b.Scalars):
			return 0
		case i == len(a.Scalars):
			return -1
		case i == len(b.Scalars):
			return 1
		}
		sa, sb := a.Scalars[i], b.Scalars[i]
		if sa.Name != sb.Name {
			// The one with the smaller name has room the other lacks.
			if sa.Name < sb.Name {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(sa.Value, sb.Value); c != 0 {
			return c
		}
	}
}

// merged sorts groups from the roomiest and merges groups of the same room;
// groups of no nodes go.
func merged(groups []NodeRoom) []NodeRoom {
	slices.SortFunc(groups, func(a, b NodeRoom) int { return compareRoom(&b.Free, &a.Free) })
	out := groups[:0]
	for _, g := range groups {
		switch {
		case g.Count <= 0:
		case len(out) > 0 && compareRoom(&out[len(out)-1].Free, &g.Free) == 0:
			out[len(out)-1].Count += g.Count
		default:
			out = append(out, g)
		}
	}
	return out
}

// canonical copies r with its extended resources sorted by name and those
// of 0 or less left out (they fit nothing, as a missing one).
func canonical(r Resources) Resources {
	scalars := r.Scalars
	r.Scalars = nil
	for _, s := range scalars {
		if s.Value > 0 {
			r.Scalars = append(r.Scalars, s)
		}
	}
	slices.SortFunc(r.Scalars, func(a, b ScalarResource) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return r
}

// minus returns have less n replicas of req, each also one pod, floored at
// 0, with extended resources of its own.
func minus(have Resources, req *Resources, n int64) Resources {
	out := have
	out.MilliCPU = sub(have.MilliCPU, req.MilliCPU, n)
	out.Memory = sub(have.Memory, req.Memory, n)
	out.Pods = sub(have.Pods, 1, n)
	out.Scalars = slices.Clone(have.Scalars)
	for i := range out.Scalars {
		out.Scalars[i].Value = sub(out.Scalars[i].Value, req.scalar(out.Scalars[i].Name), n)
	}
	return out
}

// sub is have - per × n, floored at 0, without overflowing.
func sub(have, per, n int64) int64 {
	if have <= 0 {
		return 0
	}
	if per <= 0 {
		return have
	}
	if n > have/per {
		return 0
	}
	return have - per*n
}
