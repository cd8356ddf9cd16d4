// Package e2e runs Shepherd end to end, in-process: the embedded hub, five
// simulated member clusters (real kube-apiservers, workload controllers,
// kube-schedulers and kwok nodes) and the controller manager. Templates are
// applied to the hub and checked where they land: in the members.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

var (
	fleet *localfleet.Fleet
	// fleetSpec is the fleet as the suite made it (members' topology and
	// labels), for tests that join a member again.
	fleetSpec simmember.FleetSpec
	hub       client.Client
	members   = []string{"member1", "member2", "member3"}
	memberCl  map[string]client.Client
)

// flakyMember is stopped by TestUnreachableMemberIsTainted; no other test
// places anything on it.
const flakyMember = "member4"

// failoverMember is stopped by TestClusterFailover (failover_test.go); only
// that test places anything on it.
const failoverMember = "member5"

// parallelTests is how many tests of the suite call t.Parallel: the ones
// that mostly wait on timers (a toleration or a delay running out, a
// member unreachable long enough, metrics windows and sync periods,
// minSuccessSeconds and progress deadlines). They run together, after the
// others, which they would otherwise each wait for in turn. Each keeps to
// its own namespace and to members whose state no other parallel test
// changes: member4 and member5 are stopped by theirs (see above), and on
// member1..member3 none taints or fills nodes, unjoins a member or
// asserts a division of replicas that another's few pods could shift.
// (TestUnschedulableReplicasMove, which taints and fills member2's nodes,
// runs with the others, in turn.)
const parallelTests = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelTests)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping end-to-end tests in -short mode")
		return 0
	}
	// Pods of the image unreadyImage never turn Ready in any member.
	unready, err := os.ReadFile(filepath.Join("testdata", "kwok-unready-image.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	spec := fleetenv.SmallFleet(5)
	// Rings for the Staged rollout test (rollout_test.go).
	for i, ring := range []string{"canary", "prod", "prod"} {
		spec.Members[i].Labels = map[string]string{"ring": ring}
	}
	fleetSpec = spec
	env, err := fleetenv.StartFleet("e2e", localfleet.Options{
		Fleet:      spec,
		KwokStages: [][]byte{unready},
		Controllers: controllermanager.Options{Config: controllermanager.Config{ClusterStatus: fleetenv.FastProbes(),
			Execution:    execution.Options{DriftRevertDelay: driftRevertDelay},
			FederatedHPA: federatedhpa.Options{SyncPeriod: fhpaSyncPeriod}}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	fleet, hub, memberCl = env.Fleet, env.Hub, env.Members
	return m.Run()
}
