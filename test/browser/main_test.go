// Package browser tests the dashboard in headless Chromium against a real
// fleet: the embedded hub, simulated members and the controllers. Run with
// SHEPHERD_SCREENSHOTS=DIR, it also saves a screenshot of every page to DIR
// (the README's pictures come from there).
package browser

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/test/browserenv"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var (
	env *fleetenv.FleetEnv
	hub client.Client
	// member3 is the proxy the hub reaches member3 through.
	member3 *fleetenv.Proxy
	// browser is the headless Chromium every test opens its tabs in.
	browser context.Context
	// base is the dashboard on loopback, acting with the hub's admin
	// kubeconfig unless a token is signed in; tokenBase is the same
	// dashboard as it runs beyond loopback, requiring a token.
	base, tokenBase string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping browser tests in -short mode")
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, stopBrowser, err := browserenv.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopBrowser()
	browser = b

	env, err = fleetenv.StartFleet("browser", localfleet.Options{
		Fleet:       fleetenv.SmallFleet(3),
		Controllers: controllermanager.Options{Config: controllermanager.Config{ClusterStatus: fleetenv.FastProbes()}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	hub = env.Hub
	// The hub reaches member3 through a proxy a test can cut.
	if member3, err = fleetenv.RouteThroughProxy(ctx, hub, "member3"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer member3.Close()

	hubCfg := env.Fleet.Hub.RestConfig()
	src, err := dashboard.NewHubSource(ctx, hubCfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, s := range []struct {
		url          *string
		requireToken bool
	}{{&base, false}, {&tokenBase, true}} {
		srv, err := dashboard.New(dashboard.Options{Hub: hubCfg, Source: src, RequireToken: s.requireToken, Logger: env.Log})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		addr, _, err := dashboard.Serve(ctx, "127.0.0.1:0", srv, "", "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		*s.url = "http://" + addr.String()
	}
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "the dashboard does not answer:", err)
		return 1
	}
	return m.Run()
}
