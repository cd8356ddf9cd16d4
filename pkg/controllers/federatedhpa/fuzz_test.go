package federatedhpa

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptrTime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// FuzzDecide holds decide to its invariants over random fleets: a target
// inside [min, max] stays inside; a fleet whose every pod is ready, has
// metrics and sits within the tolerance band keeps its count; a member
// left out never lowers the count.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(1), uint8(10), uint8(4), uint8(50), []byte{100, 100, 10, 0}, uint8(0))
	f.Add(uint8(2), uint8(3), uint8(3), uint8(80), []byte{255, 1, 0}, uint8(1))
	f.Add(uint8(1), uint8(50), uint8(20), uint8(1), []byte{5}, uint8(2))
	f.Fuzz(func(t *testing.T, minR, maxR, current, target uint8, uses []byte, shape uint8) {
		if minR == 0 || maxR < minR || target == 0 || target > 100 || len(uses) == 0 || len(uses) > 64 {
			return
		}
		cur := max(min(int32(current), int32(maxR)), int32(minR))
		var a, b []pod
		for i, u := range uses {
			q := p(string(rune('a'+i%26))+string(rune('a'+i/26)), 100, int64(u))
			switch {
			case shape&1 != 0 && i%3 == 1:
				q.hasUsage[0] = false
			case shape&2 != 0 && i%4 == 2:
				q.pending = true
			}
			if i%2 == 0 {
				a = append(a, q)
			} else {
				b = append(b, q)
			}
		}
		s := spec(int32(minR), int32(maxR), cpuUtil(int32(target)))
		in := input{spec: s, current: cur, status: cur, clusters: []cluster{{name: "a", pods: a}, {name: "b", pods: b}}, now: t0, tolerance: DefaultTolerance, downWindow: DefaultDownscaleWindow}
		o := decide(in)
		if o.desired < int32(minR) || o.desired > int32(maxR) {
			t.Fatalf("desired %d outside [%d, %d] (current %d)", o.desired, minR, maxR, cur)
		}
		// A member left out: never below the current count.
		in.clusters[1].excluded = "metrics stale"
		if out := decide(in); out.desired < cur {
			t.Fatalf("with a member left out the count went down: %d -> %d", cur, out.desired)
		}
		// Every pod at one usage inside the band: no change.
		lo, hi := (int64(target)*9+9)/10, int64(target)*11/10
		u := lo + int64(uses[0])%(hi-lo+1)
		band := make([]pod, len(uses))
		for i := range band {
			band[i] = p(string(rune('a'+i%26))+string(rune('a'+i/26)), 100, u)
		}
		in.clusters = []cluster{{name: "a", pods: band}}
		if out := decide(in); out.desired != cur {
			t.Fatalf("usage %d%% against a target of %d%%: %d -> %d, want no change", u, target, cur, out.desired)
		}
	})
}
