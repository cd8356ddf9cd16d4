package framework_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// TestWithReservations: replicas in flight take their room from the sums
// and, one per node, from the nodes with most room; the snapshot they are
// taken from does not change.
func TestWithReservations(t *testing.T) {
	cpu := func(m int64) framework.Resources { return framework.Resources{MilliCPU: m} }
	base := []framework.ClusterInfo{
		{Name: "sums", Available: framework.Resources{MilliCPU: 8000, Memory: 1 << 30, Pods: 100}},
		{Name: "nodes", Available: framework.Resources{MilliCPU: 16000, Memory: 1 << 34, Pods: 400},
			Nodes: []framework.NodeRoom{{Count: 4, Free: framework.Resources{MilliCPU: 4000, Memory: 1 << 32, Pods: 100}}}},
	}
	snap, err := framework.NewSnapshot(base)
	if err != nil {
		t.Fatal(err)
	}
	one := cpu(1000)
	cases := []struct {
		name string
		rs   map[string][]framework.Reservation
		want map[string]int64 // one-CPU replicas that still fit
	}{
		{"nothing in flight", nil, map[string]int64{"sums": 8, "nodes": 16}},
		{"sums", map[string][]framework.Reservation{"sums": {{Request: one, Replicas: 5}}}, map[string]int64{"sums": 3, "nodes": 16}},
		{"more than there is: floored at zero", map[string][]framework.Reservation{"sums": {{Request: one, Replicas: 50}}}, map[string]int64{"sums": 0, "nodes": 16}},
		{"spread over the nodes", map[string][]framework.Reservation{"nodes": {{Request: cpu(3000), Replicas: 4}}}, map[string]int64{"sums": 8, "nodes": 4}},
		{"more than the nodes hold", map[string][]framework.Reservation{"nodes": {{Request: cpu(3000), Replicas: 6}}}, map[string]int64{"sums": 8, "nodes": 0}},
		{"an unknown cluster is ignored", map[string][]framework.Reservation{"gone": {{Request: one, Replicas: 5}}}, map[string]int64{"sums": 8, "nodes": 16}},
		{"a request of nothing takes nothing", map[string][]framework.Reservation{"sums": {{Replicas: 5}}}, map[string]int64{"sums": 8, "nodes": 16}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := snap.WithReservations(tt.rs)
			for name, want := range tt.want {
				i, _ := got.Index(name)
				if n, _ := got.At(i).Fit(&one); n != want {
					t.Errorf("%s: %d fit, want %d", name, n, want)
				}
			}
			for i := range base {
				if n, _ := snap.At(i).Fit(&one); n != map[string]int64{"sums": 8, "nodes": 16}[snap.At(i).Name] {
					t.Errorf("the original snapshot changed: %s fits %d", snap.At(i).Name, n)
				}
			}
		})
	}
}

// FuzzWithReservations: whatever is in flight, the room left never grows,
// never goes negative, and does not depend on the order the clusters'
// reservations are given in once sorted.
func FuzzWithReservations(f *testing.F) {
	f.Add(uint64(1), uint8(5))
	f.Add(uint64(42), uint8(40))
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		r := rand.New(rand.NewPCG(seed, 7))
		ci := framework.ClusterInfo{Name: "c", Available: framework.Resources{MilliCPU: 32000, Memory: 1 << 36, Pods: 300}}
		for range 1 + r.IntN(4) {
			ci.Nodes = append(ci.Nodes, framework.NodeRoom{Count: int64(1 + r.IntN(5)),
				Free: framework.Resources{MilliCPU: int64(r.IntN(8)) * 500, Memory: int64(r.IntN(8)) << 30, Pods: int64(r.IntN(20))}})
		}
		snap, err := framework.NewSnapshot([]framework.ClusterInfo{ci})
		if err != nil {
			t.Fatal(err)
		}
		var rs []framework.Reservation
		for range int(n % 8) {
			rs = append(rs, framework.Reservation{Request: framework.Resources{MilliCPU: int64(1+r.IntN(4)) * 250, Memory: int64(r.IntN(3)) << 29}, Replicas: int64(r.IntN(10))})
		}
		a := append([]framework.Reservation(nil), rs...)
		b := append([]framework.Reservation(nil), rs...)
		r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		framework.SortReservations(a)
		framework.SortReservations(b)
		sa := snap.WithReservations(map[string][]framework.Reservation{"c": a})
		sb := snap.WithReservations(map[string][]framework.Reservation{"c": b})
		if !reflect.DeepEqual(sa.At(0).Nodes, sb.At(0).Nodes) || !reflect.DeepEqual(sa.At(0).Available, sb.At(0).Available) {
			t.Fatalf("the order of the reservations changed the result")
		}
		for _, req := range []framework.Resources{{MilliCPU: 500}, {MilliCPU: 1000, Memory: 1 << 30}, {Memory: 1 << 31}} {
			before, _ := snap.At(0).Fit(&req)
			after, _ := sa.At(0).Fit(&req)
			if after > before || after < 0 {
				t.Fatalf("request %+v: %d fit before, %d after", req, before, after)
			}
		}
		var count int64
		for _, g := range sa.At(0).Nodes {
			count += g.Count
			if g.Free.MilliCPU < 0 || g.Free.Memory < 0 || g.Free.Pods < 0 {
				t.Fatalf("negative room: %+v", g)
			}
		}
		var want int64
		for _, g := range ci.Nodes {
			want += g.Count
		}
		if count != want {
			t.Fatalf("%d nodes after, %d before", count, want)
		}
	})
}
