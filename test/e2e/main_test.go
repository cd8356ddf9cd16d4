// Package e2e runs Shepherd end to end, in-process: the embedded hub, five
// simulated member clusters (real kube-apiservers, workload controllers,
// kube-schedulers and kwok nodes) and the controller manager. Templates are
// applied to the hub and checked where they land: in the members.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/localfleet"
	"github.com/shepherd-io/shepherd/pkg/member"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var (
	fleet    *localfleet.Fleet
	hub      client.Client
	members  = []string{"member1", "member2", "member3"}
	memberCl map[string]client.Client
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
	fleetSpec := member.DefaultFleet(5)
	for i := range fleetSpec.Members {
		fleetSpec.Members[i].Nodes = 2
	}
	env, err := fleetenv.StartFleet("e2e", localfleet.Options{
		Fleet: fleetSpec,
		Controllers: controllermanager.Options{
			// Short enough for the tests to see taints quickly, long enough that a
			// probe slowed down by two busy cores does not taint a healthy member.
			ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 10 * time.Second, NoExecuteGracePeriod: 20 * time.Second, ProbeTimeout: 5 * time.Second},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	fleet, hub, memberCl = env.Fleet, env.Hub, env.Members
	return m.Run()
}
