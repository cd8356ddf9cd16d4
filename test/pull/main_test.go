// Package pull runs Pull clusters end to end, in-process: the embedded hub,
// a push member and a Pull member whose agent runs beside it with the
// credentials `shepherd register` issued. The hub has no endpoint for the
// Pull member: everything it learns comes from the agent.
package pull

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

const (
	pushMember = "member1"
	pullMember = "pull1"
)

var (
	fleet    *localfleet.Fleet
	hub      client.Client
	memberCl map[string]client.Client
	// agentCfg is the Pull member's agent configuration for the hub: the
	// registered credentials and nothing else.
	agentCfg *rest.Config
	testLog  logr.Logger
	// agentOpts time the agents of this suite.
	agentOpts = fleetenv.FastAgent()
)

func TestMain(m *testing.M) {
	flag.Parse() // testing.Short needs the flags parsed
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping pull-mode end-to-end tests in -short mode")
		return 0
	}
	spec := simmember.DefaultFleet(2)
	spec.Members[1].Name, spec.Members[1].Pull = pullMember, true
	for i := range spec.Members {
		spec.Members[i].Nodes = 2
	}
	env, err := fleetenv.StartFleet("pull", localfleet.Options{
		Fleet: spec,
		Agent: agentOpts,
		Controllers: controllermanager.Options{Config: controllermanager.Config{
			ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 4 * time.Second, NoExecuteGracePeriod: 8 * time.Second, ProbeTimeout: 5 * time.Second},
		}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	fleet, hub, memberCl, testLog = env.Fleet, env.Hub, env.Members, env.Log
	kc, err := os.ReadFile(localfleet.AgentKubeconfigPath(env.DataDir, pullMember))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if agentCfg, err = clientcmd.RESTConfigFromKubeConfig(kc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func newClient(cfg *rest.Config) (client.Client, error) { return fleetenv.NewClient(cfg) }
