// Package e2e runs Shepherd end to end, in-process: the embedded hub, five
// simulated member clusters (real kube-apiservers, workload controllers,
// kube-schedulers and kwok nodes) and the controller manager. Templates are
// applied to the hub and checked where they land: in the members.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/controlplane"
	"github.com/shepherd-io/shepherd/pkg/localfleet"
	"github.com/shepherd-io/shepherd/pkg/member"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

var (
	fleet    *localfleet.Fleet
	hub      client.Client
	dataDir  string
	members  = []string{"member1", "member2", "member3"}
	memberCl = map[string]client.Client{}
)

// flakyMember is stopped by TestUnreachableMemberIsTainted; no other test
// places anything on it.
const flakyMember = "member4"

// failoverMember is stopped by TestClusterFailover (failover_test.go); only
// that test places anything on it.
const failoverMember = "member5"

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping end-to-end tests in -short mode")
		return 0
	}
	var err error
	dataDir, err = os.MkdirTemp("", "shepherd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dataDir)
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	controlplane.RedirectKlog(log.WithName("k8s"))

	fleetSpec := member.DefaultFleet(5)
	for i := range fleetSpec.Members {
		fleetSpec.Members[i].Nodes = 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	fleet, err = localfleet.Start(ctx, localfleet.Options{
		DataDir: dataDir,
		Fleet:   fleetSpec,
		Logger:  log,
		Controllers: controllermanager.Options{
			// Short enough for the tests to see taints quickly, long enough that a
			// probe slowed down by two busy cores does not taint a healthy member.
			ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 10 * time.Second, NoExecuteGracePeriod: 20 * time.Second, ProbeTimeout: 5 * time.Second},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the fleet:", err)
		return 1
	}
	fmt.Printf("fleet of %d members started in %s\n", len(fleet.Members), time.Since(started).Round(time.Millisecond))
	defer func() {
		if err := fleet.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the fleet:", err)
		}
	}()
	if hub, err = newClient(fleet.Hub.RestConfig()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, mem := range fleet.Members {
		if memberCl[mem.Name()], err = newClient(mem.RestConfig()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

func newClient(cfg *rest.Config) (client.Client, error) {
	cfg.QPS, cfg.Burst = 200, 400
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
