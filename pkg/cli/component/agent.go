package component

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/orphans"
	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/pkg/membership"
)

// NewAgentCommand is `shepherd agent` and the root of shepherd-agent.
func NewAgentCommand() *cobra.Command {
	var (
		hub              kubeconfig.HubFlags
		opts             agent.Options
		memberKubeconfig string
		hubSecret        string
		verbose          int
	)
	cmd := &cobra.Command{
		Use:   "agent --cluster NAME --hub-kubeconfig FILE",
		Short: "Run the agent of a Pull cluster, inside (or beside) the member",
		Long: `Run the agent of the Pull cluster NAME. The hub never dials a Pull cluster:
the agent connects to the hub with the credentials "shepherd register" issued,
which reach only this cluster's Works, its Cluster's status and its Lease, and
does the hub's work for this member:

  - applies the cluster's Works to the member, with the same rules as push mode
    (an object Shepherd did not create or adopt is never changed or deleted);
  - writes each object's status and health into its Work;
  - reports the member's readiness, version, APIs and resources in the
    Cluster's status;
  - holds and renews the Lease shepherd-agent in the namespace shepherd-es-NAME;
  - renews its own hub token once four fifths of its lifetime have passed, and
    stores the new one in the --hub-kubeconfig file, or in the member Secret
    --hub-kubeconfig-secret names (the old token keeps working until it
    expires).

Several agents of one cluster may run: the one holding the Lease acts, the
others wait. The hub judges the cluster's readiness by the Lease's renewals:
an agent that stops makes the cluster Unknown, and after the grace periods it
is tainted and its workloads fail over, as for an unreachable Push member.

The member is reached with --kubeconfig, or in a pod with its ServiceAccount.
An agent that cannot reach the hub, at start or later, keeps trying, and starts
again when its Lease was lost; it exits only when it cannot serve NAME at all:
the hub has refused it for ` + agent.DefaultHubGrace.String() + ` (rejected credentials, credentials of
another cluster, a cluster that is not registered or not Pull; a hub that has
just started refuses everyone until its authorizer has loaded).`,
		Example: `  # beside the member, with the kubeconfig "shepherd register" wrote
  shepherd agent --cluster edge-1 --hub-kubeconfig edge-1-hub.kubeconfig --kubeconfig member.kubeconfig

  # in the member (config/agent): the hub kubeconfig is mounted from a Secret
  shepherd agent --cluster edge-1 --hub-kubeconfig /etc/shepherd/hub/kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := membership.ValidateName(opts.Cluster); opts.Cluster != "" && err != nil {
				return fmt.Errorf("--cluster: %w", err)
			}
			if opts.Cluster == "" {
				return fmt.Errorf("--cluster is required: the name the cluster was registered with (shepherd register NAME)")
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			if opts.Execution.DriftRevertDelay <= 0 {
				return fmt.Errorf("--drift-revert-delay %s must be positive", opts.Execution.DriftRevertDelay)
			}
			if opts.Orphans.Period <= 0 {
				return fmt.Errorf("--orphan-sweep-period %s must be positive", opts.Orphans.Period)
			}
			if hub.Kubeconfig == "" {
				return fmt.Errorf("--hub-kubeconfig is required: the kubeconfig `shepherd register %s` wrote", opts.Cluster)
			}
			hubCfg, err := hub.RestConfig()
			if err != nil {
				return err
			}
			memberCfg, err := kubeconfig.Member(memberKubeconfig, "").Load()
			if err != nil {
				return err
			}
			if opts.TokenStore, err = tokenStore(hub.Kubeconfig, hubSecret, memberCfg); err != nil {
				return err
			}
			log := logging.New(cmd.ErrOrStderr(), verbose)
			logging.Route(log, 0)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return agent.Run(ctx, hubCfg, memberCfg, opts, log.WithName("agent"))
		},
	}
	hub.AddTo(cmd)
	f := cmd.Flags()
	f.StringVar(&opts.Cluster, "cluster", "", "name of the Pull cluster this agent serves (required)")
	f.StringVar(&memberKubeconfig, "kubeconfig", "", "kubeconfig of the member (default: the pod's ServiceAccount)")
	f.StringVar(&hubSecret, "hub-kubeconfig-secret", "", "NAMESPACE/NAME of the member Secret (key kubeconfig) the --hub-kubeconfig file is mounted from: renewed tokens are stored there (default: the renewed token is written into the --hub-kubeconfig file)")
	f.StringVar(&opts.Identity, "identity", "", "this agent's name in the Lease (default: host name and a random suffix; a pod's name is a good choice)")
	f.DurationVar(&opts.LeaseDuration, "lease-duration", 0, fmt.Sprintf("how long the Lease lasts without renewal: after it the hub deems the cluster Unknown (default %s)", agent.DefaultLeaseDuration))
	f.DurationVar(&opts.RenewDeadline, "renew-deadline", 0, fmt.Sprintf("how long the acting agent keeps trying to renew before it stops acting (default %s)", agent.DefaultRenewDeadline))
	f.DurationVar(&opts.RetryPeriod, "retry-period", 0, fmt.Sprintf("how often the Lease is renewed or tried (default %s)", agent.DefaultRetryPeriod))
	f.DurationVar(&opts.RetryMaxDelay, "retry-max-delay", controllerdeps.DefaultRetryMaxDelay, "the longest a controller waits before retrying an object whose reconcile failed; not negative (from 5ms, doubling; the execution controller backs off from 1s to 5m)")
	f.DurationVar(&opts.ClusterStatus.ProbeInterval, "probe-interval", 0, "how often the member's status is collected (default 10s)")
	f.DurationVar(&opts.Execution.DriftRevertDelay, "drift-revert-delay", execution.DefaultDriftRevertDelay, "how long a member edit of a field Shepherd applies is reported (Drifted=True) before the agent puts the field back, under applyStrategy.whenToApply Always")
	f.DurationVar(&opts.Orphans.Period, "orphan-sweep-period", orphans.DefaultPeriod, "how often the member is swept for objects Shepherd applied whose Work is gone (removed on their second sighting; one metadata list per kind the member serves)")
	f.StringSliceVar(&opts.Controllers, "controllers", []string{"*"}, controllersUsage(controllermanager.AgentControllers()))
	f.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" turns it off)`)
	f.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" turns them off)`)
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

// tokenStore is where the agent keeps the hub tokens it renews: the member
// Secret secret ("NAMESPACE/NAME") names, or else the kubeconfig file.
func tokenStore(file, secret string, memberCfg *rest.Config) (agent.TokenStore, error) {
	if secret == "" {
		return agent.FileTokenStore{Path: file}, nil
	}
	ns, name, ok := strings.Cut(secret, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--hub-kubeconfig-secret %q: want NAMESPACE/NAME, e.g. shepherd-agent/shepherd-agent-hub", secret)
	}
	member, err := kubernetes.NewForConfig(memberCfg)
	if err != nil {
		return nil, err
	}
	return agent.SecretTokenStore{Member: member, Namespace: ns, Name: name}, nil
}
