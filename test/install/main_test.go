// Package install runs Shepherd's controller manager as it runs when
// installed into a hub: under its ServiceAccount, with only the RBAC that
// config/default grants. The embedded hub and three simulated members run
// in-process (one of them a Pull cluster with its agent); the manifests are installed with package install, and the
// controller manager gets a rest.Config holding nothing but a token of its
// ServiceAccount and the hub's CA. Every 403 it receives fails the test.
package install

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var (
	fleet    *localfleet.Fleet
	hub      client.Client // the hub's admin (system:masters)
	members  = []string{"member1", "member2", pullMember}
	memberCl map[string]client.Client
)

// pullMember is a Pull cluster: its in-process agent applies its Works,
// and the hub judges it by the agent's Lease.
const pullMember = "member3"

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping the least-privilege test in -short mode: it starts a hub and three members")
		return 0
	}
	spec := simmember.DefaultFleet(len(members))
	for i := range spec.Members {
		spec.Members[i].Nodes = 2
		spec.Members[i].Pull = spec.Members[i].Name == pullMember
	}
	// The clusters only: the controller manager is started by the test,
	// under its own identity, once the manifests are installed.
	env, err := fleetenv.StartFleet("install", localfleet.Options{Fleet: spec, NoControllers: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	fleet, hub, memberCl = env.Fleet, env.Hub, env.Members
	return m.Run()
}

// forbidden records every request answered 403.
type forbidden struct {
	mu   sync.Mutex
	seen []string
}

// wrap is a rest.Config WrapTransport recording 403s.
func (f *forbidden) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.seen = append(f.seen, req.Method+" "+req.URL.RequestURI())
			f.mu.Unlock()
		}
		return resp, err
	})
}

// list returns each refused request once, with how often it was refused.
func (f *forbidden) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	count := map[string]int{}
	for _, s := range f.seen {
		count[s]++
	}
	out := make([]string, 0, len(count))
	for s, n := range count {
		out = append(out, fmt.Sprintf("%s (%d times)", s, n))
	}
	slices.Sort(out)
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return r(req) }

// eventually is the suites' one wait (fleetenv).
var eventually = fleetenv.Eventually
