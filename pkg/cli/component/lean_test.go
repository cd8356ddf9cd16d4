package component

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the package path prefixes the component binaries must not
// link: the embedded control plane (kube-apiserver's packages, etcd's
// server), k8s.io/kubernetes (kube-scheduler, the kubelet's packages), kwok
// and the development and benchmark packages (internal/dev, internal/bench).
// They belong to `shepherd up`, the simulated members and the benches, which
// only cmd/shepherd builds.
var forbidden = []string{
	"k8s.io/kubernetes/",
	"go.etcd.io/etcd/server/",
	"sigs.k8s.io/kwok/",
	"k8s.io/apiserver/pkg/server",
	"github.com/shepherd-io/shepherd/internal/dev/",
	"github.com/shepherd-io/shepherd/internal/bench/",
}

// TestComponentBinariesAreLean reads the binaries' dependency graphs with
// `go list -deps` (no build) and refuses any forbidden package, naming a
// chain of imports that brings it in.
func TestComponentBinariesAreLean(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	for _, main := range []string{
		"github.com/shepherd-io/shepherd/cmd/shepherd-controller-manager",
		"github.com/shepherd-io/shepherd/cmd/shepherd-agent",
	} {
		t.Run(main[strings.LastIndex(main, "/")+1:], func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, main).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", main, err, out)
			}
			bad, importers := forbiddenDeps(string(out))
			for _, p := range bad {
				t.Errorf("%s links %s, imported through %s", main, p, strings.Join(chain(p, importers), " <- "))
			}
		})
	}
}

// forbiddenDeps reads `go list -deps` lines ("package import import ...")
// and returns the forbidden packages, in order, and for each package one
// package that imports it.
func forbiddenDeps(list string) (bad []string, importers map[string]string) {
	importers = map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, imp := range fields[1:] {
			if _, ok := importers[imp]; !ok {
				importers[imp] = fields[0]
			}
		}
		for _, f := range forbidden {
			if strings.HasPrefix(fields[0], f) {
				bad = append(bad, fields[0])
				break
			}
		}
	}
	return bad, importers
}

// chain follows importers up from p (at most 30 steps).
func chain(p string, importers map[string]string) []string {
	var out []string
	for at := importers[p]; at != "" && len(out) < 30; at = importers[at] {
		out = append(out, at)
	}
	return out
}

// TestForbiddenDeps: the reader of go list finds a forbidden package deep
// in the graph and the chain that brings it in, and passes a clean graph.
func TestForbiddenDeps(t *testing.T) {
	list := "k8s.io/kubernetes/pkg/scheduler\n" +
		"example.com/lib k8s.io/kubernetes/pkg/scheduler fmt\n" +
		"fmt\n" +
		"example.com/cmd example.com/lib fmt\n"
	bad, importers := forbiddenDeps(list)
	if len(bad) != 1 || bad[0] != "k8s.io/kubernetes/pkg/scheduler" {
		t.Fatalf("forbidden %v, want the scheduler package", bad)
	}
	if got := strings.Join(chain(bad[0], importers), " <- "); got != "example.com/lib <- example.com/cmd" {
		t.Fatalf("chain %q", got)
	}
	if bad, _ := forbiddenDeps("fmt\nexample.com/cmd fmt\n"); len(bad) != 0 {
		t.Fatalf("a clean graph reported %v", bad)
	}
	// Every package under internal/dev and internal/bench is refused, not
	// only the embedded control plane.
	for _, p := range []string{"internal/dev/localfleet", "internal/dev/simmember", "internal/bench/hubbench", "internal/bench/fleetbench"} {
		p = "github.com/shepherd-io/shepherd/" + p
		if bad, _ := forbiddenDeps(p + "\nexample.com/cmd " + p + "\n"); len(bad) != 1 || bad[0] != p {
			t.Errorf("%s not refused: %v", p, bad)
		}
	}
}
