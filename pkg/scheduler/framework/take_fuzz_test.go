package framework

import (
	"reflect"
	"slices"
	"testing"
)

// FuzzTake checks Take's invariants on small clusters: no room goes
// negative; the sums lose exactly n replicas' worth (floored at 0) and the
// nodes exactly the replicas they hold, which are as many as fit node by
// node; no request fits more afterwards; the result is the one replica at
// a time placement of Take's doc, whatever order the groups come in.
func FuzzTake(f *testing.F) {
	f.Add([]byte{4, 16, 0, 10, 0}, uint16(1000), uint16(0), uint8(0), uint16(4), uint8(0))
	f.Add([]byte{6, 6, 8, 100, 0}, uint16(1000), uint16(1), uint8(0), uint16(4), uint8(1))
	f.Add([]byte{3, 8, 4, 10, 1, 1, 32, 4, 10, 2}, uint16(1000), uint16(0), uint8(1), uint16(8), uint8(2))
	f.Add([]byte{1, 4, 4, 3, 0, 2, 4, 4, 3, 0}, uint16(0), uint16(0), uint8(0), uint16(9), uint8(3))
	f.Fuzz(func(t *testing.T, spec []byte, reqCPU, reqMem uint16, reqGPU uint8, n uint16, rot uint8) {
		var groups []NodeRoom
		for len(spec) >= 5 && len(groups) < 8 {
			free := Resources{MilliCPU: int64(spec[1]%40) * 250, Memory: int64(spec[2]%16) << 28, Pods: int64(spec[3] % 12)}
			if g := int64(spec[4] % 4); g > 0 {
				free.Scalars = []ScalarResource{{Name: gpu, Value: g - 1}}
			}
			groups = append(groups, NodeRoom{Count: int64(spec[0]%4) + 1, Free: free})
			spec = spec[5:]
		}
		req := &Resources{MilliCPU: int64(reqCPU % 3000), Memory: int64(reqMem%4) << 28}
		if g := int64(reqGPU % 3); g > 0 {
			req.Scalars = []ScalarResource{{Name: gpu, Value: g}}
		}
		replicas := int64(n % 80)
		var available Resources
		for _, g := range groups {
			available = plus(available, g.Free, g.Count)
		}
		ci := ClusterInfo{Name: "c", Available: available, Nodes: groups}
		got := ci.Take(req, replicas)

		// Sums: n replicas' worth, floored at 0.
		want := Resources{MilliCPU: max(0, available.MilliCPU-replicas*req.MilliCPU),
			Memory: max(0, available.Memory-replicas*req.Memory), Pods: max(0, available.Pods-replicas)}
		for _, s := range available.Scalars {
			want.Scalars = append(want.Scalars, ScalarResource{Name: s.Name, Value: max(0, s.Value-replicas*req.scalar(s.Name))})
		}
		if replicas == 0 {
			if !reflect.DeepEqual(got, ci) {
				t.Fatalf("nothing to take, got %+v from %+v", got, ci)
			}
			return
		}
		if !reflect.DeepEqual(got.Available, want) {
			t.Fatalf("available %+v, want %+v (from %+v, %d × %+v)", got.Available, want, available, replicas, *req)
		}
		if len(groups) == 0 {
			if got.Nodes != nil {
				t.Fatalf("a cluster without a node model got one: %+v", got.Nodes)
			}
			return
		}

		// Nodes: none negative, as many nodes, canonical.
		var count, capBefore, capAfter int64
		for i, g := range got.Nodes {
			if g.Count < 1 || g.Free.MilliCPU < 0 || g.Free.Memory < 0 || g.Free.Pods < 0 {
				t.Fatalf("group %d: %+v", i, g)
			}
			for _, s := range g.Free.Scalars {
				if s.Value <= 0 {
					t.Fatalf("group %d keeps %s %d", i, s.Name, s.Value)
				}
			}
			if i > 0 && compareRoom(&got.Nodes[i-1].Free, &g.Free) <= 0 {
				t.Fatalf("groups not merged and sorted from the roomiest: %+v", got.Nodes)
			}
			count += g.Count
			capAfter += g.Count * fitOne(&g.Free, req)
		}
		var sumBefore, sumAfter Resources
		for _, g := range groups {
			count -= g.Count
			capBefore += g.Count * fitOne(&g.Free, req)
			sumBefore = plus(sumBefore, g.Free, g.Count)
		}
		for _, g := range got.Nodes {
			sumAfter = plus(sumAfter, g.Free, g.Count)
		}
		if count != 0 {
			t.Fatalf("%d nodes more after: %+v", count, got.Nodes)
		}
		// The nodes hold min(n, what fits node by node), and lose exactly
		// that many replicas' worth.
		placed := min(replicas, capBefore)
		if sumBefore.Pods-sumAfter.Pods != placed || capBefore-capAfter != placed {
			t.Fatalf("nodes placed %d (pods) and lost %d replicas of room, want %d: %+v -> %+v",
				sumBefore.Pods-sumAfter.Pods, capBefore-capAfter, placed, groups, got.Nodes)
		}
		if sumBefore.MilliCPU-sumAfter.MilliCPU != placed*req.MilliCPU || sumBefore.Memory-sumAfter.Memory != placed*req.Memory ||
			sumBefore.scalar(gpu)-sumAfter.scalar(gpu) != placed*req.scalar(gpu) {
			t.Fatalf("nodes lost %+v, want %d × %+v", minusAll(sumBefore, sumAfter), placed, *req)
		}

		// No request fits more than before.
		for _, q := range []*Resources{req, {MilliCPU: 250}, {Memory: 1 << 28}, {MilliCPU: 1000, Memory: 1 << 29},
			{Scalars: []ScalarResource{{Name: gpu, Value: 1}}}} {
			before, _ := ci.Fit(q)
			after, _ := got.Fit(q)
			if after > before {
				t.Fatalf("%+v: %d fit after, %d before", *q, after, before)
			}
		}

		// One replica at a time, node by node, comes to the same.
		if naive := naiveTake(groups, req, replicas); !reflect.DeepEqual(got.Nodes, naive) {
			t.Fatalf("got %+v, one at a time gives %+v", got.Nodes, naive)
		}

		// The groups' order does not matter, nor does the input change.
		k := int(rot) % len(groups)
		shuffled := slices.Concat(groups[k:], groups[:k])
		slices.Reverse(shuffled[:len(shuffled)/2+int(rot)%2])
		again := ClusterInfo{Name: "c", Available: available, Nodes: shuffled}.Take(req, replicas)
		if !reflect.DeepEqual(again.Nodes, got.Nodes) {
			t.Fatalf("groups %+v give %+v; %+v give %+v", groups, got.Nodes, shuffled, again.Nodes)
		}
	})
}

// naiveTake is Take's node rule for one node and one replica at a time.
func naiveTake(groups []NodeRoom, req *Resources, n int64) []NodeRoom {
	var nodes []Resources
	for _, g := range groups {
		for range g.Count {
			nodes = append(nodes, canonical(g.Free))
		}
	}
	for range n {
		best := -1
		for i := range nodes {
			if fitOne(&nodes[i], req) >= 1 && (best < 0 || roomier(&nodes[i], &nodes[best], req)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		nodes[best] = canonical(minus(nodes[best], req, 1))
	}
	out := make([]NodeRoom, len(nodes))
	for i := range nodes {
		out[i] = NodeRoom{Count: 1, Free: nodes[i]}
	}
	return merged(out)
}

// plus adds k × r to sum (extended resources by name).
func plus(sum, r Resources, k int64) Resources {
	sum.MilliCPU += k * r.MilliCPU
	sum.Memory += k * r.Memory
	sum.Pods += k * r.Pods
	sum.Scalars = slices.Clone(sum.Scalars)
	for _, s := range r.Scalars {
		i := slices.IndexFunc(sum.Scalars, func(x ScalarResource) bool { return x.Name == s.Name })
		if i < 0 {
			sum.Scalars = append(sum.Scalars, ScalarResource{Name: s.Name})
			i = len(sum.Scalars) - 1
		}
		sum.Scalars[i].Value += k * s.Value
	}
	return sum
}

func minusAll(a, b Resources) Resources {
	return Resources{MilliCPU: a.MilliCPU - b.MilliCPU, Memory: a.Memory - b.Memory, Pods: a.Pods - b.Pods,
		Scalars: []ScalarResource{{Name: gpu, Value: a.scalar(gpu) - b.scalar(gpu)}}}
}
