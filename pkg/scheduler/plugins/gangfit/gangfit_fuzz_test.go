package gangfit

import (
	"fmt"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// FuzzShortfall checks the filter against placing the gang one pod at a
// time, in order, each pod on a node with room for it (ClusterInfo.Take of
// one replica): the cluster passes exactly when every pod finds a node,
// and when it does not, the component named is the first with a pod left
// over and the count of its pods that fit is the count placed. So a cluster
// the filter passes never leaves a component short once its components are
// taken in order, and the reason never overstates or understates the room.
func FuzzShortfall(f *testing.F) {
	f.Add([]byte{1, 9, 32, 110}, []byte{1, 8, 16, 4, 16, 32})
	f.Add([]byte{1, 24, 16, 110}, []byte{2, 8, 4, 1, 24, 4})
	f.Add([]byte{0, 6, 16, 8, 0, 6, 16, 8}, []byte{0, 0, 0, 3, 1, 1})
	f.Add([]byte{}, []byte{1, 4, 8, 4, 16, 32})
	f.Fuzz(func(t *testing.T, nodeSpec, compSpec []byte) {
		var ci framework.ClusterInfo
		ci.Name = "c"
		for len(nodeSpec) >= 4 && len(ci.Nodes) < 6 {
			g := framework.NodeRoom{Count: int64(nodeSpec[0]%3) + 1, Free: framework.Resources{
				MilliCPU: int64(nodeSpec[1]%33) * 500, Memory: int64(nodeSpec[2]%65) << 28, Pods: int64(nodeSpec[3] % 16)}}
			ci.Nodes = append(ci.Nodes, g)
			ci.Available.MilliCPU += g.Count * g.Free.MilliCPU
			ci.Available.Memory += g.Count * g.Free.Memory
			ci.Available.Pods += g.Count * g.Free.Pods
			nodeSpec = nodeSpec[4:]
		}
		if len(ci.Nodes) == 0 && len(nodeSpec) > 0 {
			// No node model: the sums alone.
			ci.Available = framework.Resources{MilliCPU: int64(nodeSpec[0]) * 250, Memory: 64 << 30, Pods: 110}
		}
		var w framework.Workload
		for i := 0; len(compSpec) >= 3 && i < 5; i++ {
			w.Components = append(w.Components, framework.Component{Name: fmt.Sprintf("c%d", i), Replicas: int32(compSpec[0] % 9),
				Request: framework.Resources{MilliCPU: int64(compSpec[1]%17) * 500, Memory: int64(compSpec[2]%9) << 29}})
			compSpec = compSpec[3:]
		}
		_, short, ok := Take(ci, w.Components, w.HeldComponents(ci.Name))

		// One pod at a time.
		room, first := ci, -1
		var placed int64
		for i, c := range w.Components {
			if c.Request.IsZero() {
				continue
			}
			placed = 0
			for range c.Replicas {
				if n, _ := room.Fit(&c.Request); n < 1 {
					break
				}
				room = room.Take(&c.Request, 1)
				placed++
			}
			if placed < int64(c.Replicas) {
				first = i
				break
			}
		}
		switch {
		case ok && first >= 0:
			t.Fatalf("passed, but component %q places %d of %d pods one at a time (%+v on %+v)",
				w.Components[first].Name, placed, w.Components[first].Replicas, w.Components, ci)
		case !ok && first < 0:
			t.Fatalf("refused (%s), but every pod finds a node one at a time (%+v on %+v)", short, w.Components, ci)
		case !ok && (short.Component != w.Components[first].Name || short.Fit != placed || short.Need != int64(w.Components[first].Replicas)):
			t.Fatalf("refused with %s; one at a time, component %q places %d of %d", short, w.Components[first].Name, placed, w.Components[first].Replicas)
		}
	})
}
