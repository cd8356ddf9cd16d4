package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

// shutdownBudget is how long `shepherd up` may take to stop after a signal.
const shutdownBudget = 5 * time.Second

type upOptions struct {
	dataDir       string
	port          int
	members       int
	pullMembers   int
	fleetFile     string
	noControllers bool
	dashboard     string
	verbose       int
	// schedulerConfig is the --scheduler-config file, if any.
	schedulerConfig string
}

func defaultDataDir() string { return kubeconfig.DataDir() }

func newUpCommand() *cobra.Command {
	o := upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local Shepherd fleet (hub, member clusters, controllers) in this process",
		Long: `Start a local Shepherd fleet in this process:

  - the hub: etcd and a real kube-apiserver on loopback with Shepherd's CRDs;
    its kubeconfig is written to DATA_DIR/kubeconfig;
  - member clusters (--members, default 3, named member1..memberN, or the
    members of --fleet): each a real kube-apiserver with the real workload
    controllers, a real kube-scheduler and simulated (kwok) nodes, so
    Deployments become available, and metrics.k8s.io (kubectl top,
    autoscalers) from simulated usage: each running pod's requests times
    the percent in its template's sim.shepherd.io/cpu-utilization and
    sim.shepherd.io/memory-utilization annotations (default 10 and 50),
    and custom.metrics.k8s.io values from metric.sim.shepherd.io/NAME
    annotations, overridable per member in kube-system/shepherd-sim-usage
    (docs/architecture.md); member NAME's kubeconfig is written to
    DATA_DIR/members/NAME.kubeconfig; members join the hub like real clusters
    (a credentials Secret and a Cluster object), with
    "shepherd join --allow-rbac-propagation", so that operators' install
    manifests (ClusterRoles, bindings) propagate;
  - Pull members (--pull-members, named pull1..pullN, or "pull: true" in the
    fleet file): registered like "shepherd register" (no endpoint on the hub)
    and served by an agent in this process, with the credentials written to
    DATA_DIR/members/NAME.agent.kubeconfig;
  - the controller manager that propagates templates to the members, run
    as installed: under its ServiceAccount and RBAC (config/rbac), on a hub
    with API Priority and Fairness and Shepherd's priority levels
    (config/flowcontrol) and the admission policies that keep bindings
    Shepherd's and overrides within their writers' rights (config/admission);
  - the web dashboard (--dashboard-listen, default 127.0.0.1:8080), whose URL
    is printed.

Everything is kept in DATA_DIR: running "shepherd up" again with the same
--data-dir brings the whole fleet back with its state. Stop it with Ctrl-C or
SIGTERM; it shuts down within 5 seconds.

A fleet file sets each member's topology and capacity:

  members:
  - name: member1
    provider: aws
    region: us-east-1
    zone: us-east-1a
    labels: {env: prod}
    nodes: 4
    nodeCPU: "8"
    nodeMemory: 32Gi
    nodePods: 110`,
		Example: `  # hub and three members with the default data dir ($HOME/.shepherd)
  shepherd up

  # in another terminal
  export KUBECONFIG=$HOME/.shepherd/kubeconfig
  kubectl get clusters
  kubectl apply -f examples/quickstart/
  shepherd get placements -A
  kubectl --kubeconfig $HOME/.shepherd/members/member1.kubeconfig get deployments

  # the hub alone, or a fleet of your own
  shepherd up --members 0

  shepherd up --fleet fleet.yaml --data-dir /tmp/fleet

  # two push members and one Pull member behind its agent
  shepherd up --members 2 --pull-members 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd, o)
		},
	}
	cmd.Flags().StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory holding the fleet's data, certificates and kubeconfigs (env SHEPHERD_DATA_DIR)")
	cmd.Flags().IntVar(&o.port, "port", 0, "port of the hub's kube-apiserver on 127.0.0.1 (0 picks a free port)")
	cmd.Flags().IntVar(&o.members, "members", 3, "number of simulated member clusters, named member1..memberN (ignored with --fleet)")
	cmd.Flags().IntVar(&o.pullMembers, "pull-members", 0, "number of Pull members besides them, named pull1..pullN, each registered like `shepherd register` and served by an agent in this process (ignored with --fleet: set pull: true there)")
	cmd.Flags().StringVar(&o.fleetFile, "fleet", "", "YAML file describing the members: names, provider/region/zone, labels, nodes and their capacity")
	cmd.Flags().StringVar(&o.schedulerConfig, "scheduler-config", "", "SchedulerConfiguration file for the scheduler, as the controller manager's --scheduler-config (default: the built-in profile; the dashboard's what-if keeps the built-in one)")
	cmd.Flags().BoolVar(&o.noControllers, "no-controllers", false, "run the clusters only, without Shepherd's controllers (to run `shepherd controller-manager` yourself)")
	cmd.Flags().StringVar(&o.dashboard, "dashboard-listen", defaultDashboardListen, "address of the web dashboard (see `shepherd dashboard`); a busy port falls back to a free one; empty turns the dashboard off")
	cmd.Flags().IntVarP(&o.verbose, "verbose", "v", 0, "log verbosity (0: the banner, URLs and Shepherd's errors only; 1: Shepherd's progress and the components' errors; 2: the components' own logs)")
	return cmd
}

func (o upOptions) fleet() (simmember.FleetSpec, error) {
	if o.fleetFile != "" {
		return simmember.LoadFleet(o.fleetFile)
	}
	if o.members < 0 || o.members > 20 {
		return simmember.FleetSpec{}, fmt.Errorf("--members %d is out of range: use 0..20 (or --fleet for a fleet file)", o.members)
	}
	if o.pullMembers < 0 || o.members+o.pullMembers > 20 {
		return simmember.FleetSpec{}, fmt.Errorf("--pull-members %d is out of range: use 0..%d (at most 20 members in all)", o.pullMembers, 20-o.members)
	}
	f := simmember.DefaultFleet(o.members + o.pullMembers)
	for i := o.members; i < len(f.Members); i++ {
		f.Members[i].Name = fmt.Sprintf("pull%d", i-o.members+1)
		f.Members[i].Pull = true
	}
	return f, nil
}

func runUp(cmd *cobra.Command, o upOptions) error {
	if o.port < 0 || o.port > 65535 {
		return fmt.Errorf("--port %d is out of range: use 0..65535", o.port)
	}
	fleet, err := o.fleet()
	if err != nil {
		return err
	}
	prof, err := schedulerProfile(o.schedulerConfig)
	if err != nil {
		return err
	}
	if o.dashboard != "" {
		if err := dashboard.ValidateListen(o.dashboard); err != nil {
			return fmt.Errorf("--dashboard-listen %q: %w", o.dashboard, err)
		}
	}
	dataDir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return fmt.Errorf("--data-dir %q: %w", o.dataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("--data-dir %q cannot be created: %w", dataDir, err)
	}
	log := logging.RouteQuietly(logging.New(cmd.ErrOrStderr(), o.verbose))

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	started := time.Now()
	// One interpreter for the controller manager and the dashboard: what
	// a customization teaches the controllers, the dashboard's pages and
	// what-if know too.
	kinds := interpreter.New()
	f, err := localfleet.Start(ctx, localfleet.Options{
		DataDir:       dataDir,
		Fleet:         fleet,
		HubPort:       o.port,
		Controllers:   controllermanager.Options{Interpreter: kinds, Config: controllermanager.Config{Scheduling: scheduling.Options{Profile: prof}}},
		NoControllers: o.noControllers,
		Logger:        log,
	})
	if err != nil {
		return fmt.Errorf("starting the fleet: %w", err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Shepherd hub is up at %s with %d member(s) (started in %s)\n\n", f.Hub.URL(), len(f.Members),
		time.Since(started).Round(100*time.Millisecond))
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n  kubectl get clusters,propagationpolicies\n", f.Hub.KubeconfigPath())
	for i, m := range f.Members {
		mode := ""
		if fleet.Members[i].Pull {
			mode = " (Pull: served by its agent, with " + localfleet.AgentKubeconfigPath(dataDir, m.Name()) + ")"
		}
		fmt.Fprintf(out, "  kubectl --kubeconfig %s get nodes   # member %s%s\n", m.KubeconfigPath(), m.Name(), mode)
	}
	if o.dashboard != "" {
		url, err := startUpDashboard(ctx, f, o.dashboard, kinds, log)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\n  Dashboard: %s\n", url)
	}
	fmt.Fprintln(out, "\nPress Ctrl-C to stop.")

	select {
	case <-ctx.Done():
	case <-f.Done():
		return f.Wait()
	}
	fmt.Fprintln(out, "Stopping...")
	return waitStopped(f, shutdownBudget)
}

// startUpDashboard serves the dashboard of the fleet's hub on listen, or on
// a free port of the same host when listen's port is taken (a second fleet
// on the same machine); kinds is the controller manager's interpreter.
func startUpDashboard(ctx context.Context, f *localfleet.Fleet, listen string, kinds interpreter.Interpreter, log logr.Logger) (string, error) {
	cfg := dashboard.Config{Hub: f.Hub.RestConfig(), Listen: listen, Interpreter: kinds, Logger: log}
	url, _, err := dashboard.Start(ctx, cfg)
	if err == nil {
		return url, nil
	}
	host, _, splitErr := net.SplitHostPort(listen)
	if splitErr != nil || !errors.Is(err, syscall.EADDRINUSE) {
		return "", fmt.Errorf("--dashboard-listen %s: %w", listen, err)
	}
	cfg.Listen = net.JoinHostPort(host, "0")
	url, _, err = dashboard.Start(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("--dashboard-listen %s: %w", cfg.Listen, err)
	}
	return url, nil
}

// waitStopped waits for the fleet to finish shutting down, but no longer
// than budget: a stuck component must not keep the process alive.
func waitStopped(f *localfleet.Fleet, budget time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- f.Wait() }()
	select {
	case err := <-done:
		if err != nil && err != context.Canceled {
			return fmt.Errorf("the fleet stopped with an error: %w", err)
		}
		return nil
	case <-time.After(budget):
		return fmt.Errorf("the fleet did not stop within %s", budget)
	}
}
