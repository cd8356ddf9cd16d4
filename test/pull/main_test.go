// Package pull runs Pull clusters end to end, in-process: the embedded hub,
// a push member and a Pull member whose agent runs beside it with the
// credentials `shepherd register` issued. The hub has no endpoint for the
// Pull member: everything it learns comes from the agent.
package pull

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/controlplane"
	"github.com/shepherd-io/shepherd/pkg/localfleet"
	"github.com/shepherd-io/shepherd/pkg/member"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

const (
	pushMember = "member1"
	pullMember = "pull1"
)

var (
	fleet    *localfleet.Fleet
	hub      client.Client
	dataDir  string
	memberCl = map[string]client.Client{}
	// agentCfg is the Pull member's agent configuration for the hub: the
	// registered credentials and nothing else.
	agentCfg *rest.Config
	testLog  logr.Logger
	// agentOpts time the agents of this suite: a Lease of 4 s, so that a
	// stopped agent shows within seconds.
	agentOpts = agent.Options{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: time.Second, RestartDelay: time.Second,
		ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second}}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("skipping pull-mode end-to-end tests in -short mode")
		return 0
	}
	var err error
	dataDir, err = os.MkdirTemp("", "shepherd-pull-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dataDir)
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	testLog = log
	controlplane.RedirectKlog(log.WithName("k8s"))

	spec := member.DefaultFleet(2)
	spec.Members[1].Name, spec.Members[1].Pull = pullMember, true
	for i := range spec.Members {
		spec.Members[i].Nodes = 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	fleet, err = localfleet.Start(ctx, localfleet.Options{
		DataDir: dataDir,
		Fleet:   spec,
		Logger:  log,
		Agent:   agentOpts,
		Controllers: controllermanager.Options{
			ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 4 * time.Second, NoExecuteGracePeriod: 8 * time.Second, ProbeTimeout: 5 * time.Second},
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
	kc, err := os.ReadFile(localfleet.AgentKubeconfigPath(dataDir, pullMember))
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

func newClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
