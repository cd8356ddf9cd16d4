package federatedhpa

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptrTime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// FuzzDecide holds decide to its invariants over random fleets: a target
// inside [min, max] stays inside; a fleet whose every pod is ready, has
// metrics and sits within the tolerance band keeps its count; a member
// left out, of every metric or of one, never lowers the count. With
// shape&4 the FederatedHPA also reads a Pods metric (each pod's value a
// tenth of its CPU usage, against a target of a tenth of the CPU one) and
// with shape&8 an Object metric with a Value target, each member's copy
// at the CPU usage: the band holds for them too, whatever the number of
// members.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(1), uint8(10), uint8(4), uint8(50), []byte{100, 100, 10, 0}, uint8(0))
	f.Add(uint8(2), uint8(3), uint8(3), uint8(80), []byte{255, 1, 0}, uint8(1))
	f.Add(uint8(1), uint8(50), uint8(20), uint8(1), []byte{5}, uint8(2))
	f.Add(uint8(1), uint8(20), uint8(6), uint8(40), []byte{30, 90, 10, 200}, uint8(4|8|16))
	f.Add(uint8(2), uint8(9), uint8(4), uint8(60), []byte{60, 0, 120}, uint8(8|32))
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
		metrics := []autoscalingv2.MetricSpec{cpuUtil(int32(target))}
		if shape&4 != 0 {
			metrics = append(metrics, podsAvg("rps", resource.NewMilliQuantity(int64(target)*100, resource.DecimalSI).String()))
		}
		if shape&8 != 0 {
			metrics = append(metrics, objectValue(resource.NewMilliQuantity(int64(target)*1000, resource.DecimalSI).String()))
		}
		// withValues gives each pod of ps the extra metrics' values for
		// its CPU usage: a tenth of it for the Pods metric, none of its
		// own for the Object metric (its member's).
		withValues := func(ps []pod) []pod {
			for i := range ps {
				for _, m := range metrics[1:] {
					v := ps[i].usage[0] * 100
					if m.Type == autoscalingv2.ObjectMetricSourceType {
						v = 0
					}
					ps[i].request, ps[i].usage = append(ps[i].request, 0), append(ps[i].usage, v)
					ps[i].hasUsage, ps[i].requestErr = append(ps[i].hasUsage, ps[i].hasUsage[0]), append(ps[i].requestErr, "")
				}
			}
			return ps
		}
		// member is a cluster of ps, its Object metric's copy at milli.
		member := func(name string, ps []pod, milli int64) cluster {
			c := cluster{name: name, pods: withValues(ps), object: make([]int64, len(metrics)), hasObject: make([]bool, len(metrics))}
			for i, m := range metrics {
				if m.Type == autoscalingv2.ObjectMetricSourceType {
					c.object[i], c.hasObject[i] = milli, true
				}
			}
			return c
		}
		s := spec(int32(minR), int32(maxR), metrics...)
		in := input{spec: s, current: cur, status: cur, clusters: []cluster{member("a", a, int64(uses[0])*1000), member("b", b, int64(uses[len(uses)-1])*1000)},
			now: t0, tolerance: DefaultTolerance, downWindow: DefaultDownscaleWindow}
		o := decide(in)
		if o.desired < int32(minR) || o.desired > int32(maxR) {
			t.Fatalf("desired %d outside [%d, %d] (current %d)", o.desired, minR, maxR, cur)
		}
		// A member left out of one metric: never below the current count.
		in.clusters[1].leftOut = make([]string, len(metrics))
		in.clusters[1].leftOut[int(shape>>4)%len(metrics)] = "values stale"
		if out := decide(in); out.desired < cur {
			t.Fatalf("with a member left out of metric %d the count went down: %d -> %d", int(shape>>4)%len(metrics), cur, out.desired)
		}
		// A member left out: never below the current count.
		in.clusters[1].excluded = "metrics stale"
		if out := decide(in); out.desired < cur {
			t.Fatalf("with a member left out the count went down: %d -> %d", cur, out.desired)
		}
		// Every pod at one usage inside the band, in one member or
		// several: no change.
		lo, hi := (int64(target)*9+9)/10, int64(target)*11/10
		u := lo + int64(uses[0])%(hi-lo+1)
		band := func(prefix string, n int) []pod {
			out := make([]pod, n)
			for i := range out {
				out[i] = p(prefix+string(rune('a'+i%26))+string(rune('a'+i/26)), 100, u)
			}
			return out
		}
		in.clusters = []cluster{member("a", band("a", len(uses)), u*1000)}
		if out := decide(in); out.desired != cur {
			t.Fatalf("usage %d%% against a target of %d%%: %d -> %d, want no change", u, target, cur, out.desired)
		}
		in.clusters = []cluster{member("a", band("a", len(uses)/2+1), u*1000), member("b", band("b", len(uses)/2+1), u*1000), member("c", band("c", 1), u*1000)}
		if out := decide(in); out.desired != cur {
			t.Fatalf("usage %d%% against a target of %d%% in three members: %d -> %d, want no change", u, target, cur, out.desired)
		}
	})
}
