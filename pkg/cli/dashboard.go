package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

type dashboardOptions struct {
	hub      hubFlags
	listen   string
	readOnly bool
	certFile string
	keyFile  string
	verbose  int
}

// defaultDashboardListen is where the dashboard listens unless told.
const defaultDashboardListen = "127.0.0.1:8080"

func newDashboardCommand() *cobra.Command {
	o := &dashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the web dashboard of a hub: the fleet, every placement and why, autoscalers, failover, what-if",
		Long: `Serve Shepherd's web dashboard for a hub. Its pages:

  Fleet        clusters grouped by provider, region and zone, with readiness,
               taints, allocated capacity, workloads and replicas
  Workloads    every template with its policy, strategy, replicas and a bar
               per cluster; filters and search
  A workload   its placement on the fleet, the scheduler's explanation for
               every cluster, its Works, and a timeline of decisions,
               evictions, failovers and reschedules
  Services     the multi-cluster Services and the clusters serving each
  Autoscalers  every FederatedHPA: target, bounds, replicas, conditions,
               what each member measured, and its replica history from
               its events and the CronFederatedHPAs' runs
  Failover     evictions in progress (Confirm), blocked predecessors,
               RescheduleTasks; Reschedule a workload or a policy
  What-if      paste a policy and see the placement it would get now

The pages follow the hub live through one watch, whatever the number of open
tabs. On loopback (the default) it reads and acts with the kubeconfig's
identity, or with a token signed in on its page. With --listen beyond
loopback every request needs a bearer token, checked against the hub, and
actions are sent with that token: the hub's RBAC decides. Use TLS then.`,
		Example: `  # the hub of "shepherd up", or $KUBECONFIG
  shepherd dashboard

  # a real hub, read-only
  shepherd dashboard --kubeconfig hub.kubeconfig --read-only

  # for a team: tokens required, over TLS
  shepherd dashboard --listen 0.0.0.0:8443 --tls-cert-file tls.crt --tls-key-file tls.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dashboard.ValidateListen(o.listen); err != nil {
				return fmt.Errorf("--listen %q: %w", o.listen, err)
			}
			if (o.certFile == "") != (o.keyFile == "") {
				return fmt.Errorf("--tls-cert-file and --tls-key-file go together: give both or neither")
			}
			cfg, err := o.hub.RestConfig()
			if err != nil {
				return err
			}
			log := logging.New(cmd.ErrOrStderr(), o.verbose)
			logging.Route(log, 1)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			url, done, err := dashboard.Start(ctx, dashboard.Config{
				Hub: cfg, Listen: o.listen, ReadOnly: o.readOnly, CertFile: o.certFile, KeyFile: o.keyFile, Logger: log,
			})
			if err != nil {
				return fmt.Errorf("--listen %s: %w", o.listen, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Shepherd dashboard: %s\n", url)
			if !dashboard.IsLoopback(o.listen) {
				fmt.Fprintln(out, "Listening beyond loopback: every request needs a bearer token the hub accepts.")
				if o.certFile == "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning: tokens travel in clear text without --tls-cert-file and --tls-key-file")
				}
			}
			return <-done
		},
	}
	o.hub.AddTo(cmd)
	o.hub.AddKubeconfigAlias(cmd)
	cmd.Flags().StringVar(&o.listen, "listen", defaultDashboardListen, "address to listen on, host:port; beyond loopback every request needs a bearer token")
	cmd.Flags().BoolVar(&o.readOnly, "read-only", false, "serve the pages without any action (no Confirm, Reschedule)")
	cmd.Flags().StringVar(&o.certFile, "tls-cert-file", "", "serve HTTPS with this certificate (PEM)")
	cmd.Flags().StringVar(&o.keyFile, "tls-key-file", "", "the key of --tls-cert-file (PEM)")
	cmd.Flags().IntVarP(&o.verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}
