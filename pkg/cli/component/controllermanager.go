package component

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/descheduler"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/pkg/controllers/orphans"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/controllers/serviceimport"
	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/pkg/managerconfig"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/profile"
	"github.com/shepherd-io/shepherd/pkg/version"
)

// NewControllerManagerCommand is `shepherd controller-manager` and the root
// of shepherd-controller-manager.
func NewControllerManagerCommand() *cobra.Command {
	var (
		hub     kubeconfig.HubFlags
		opts    controllermanager.Options
		webhook admission.WebhookOptions
		verbose int
		// schedulerConfig is the --scheduler-config file, if any.
		schedulerConfig string
		// clusterSetSelector is --clusterset-selector, parsed before start.
		clusterSetSelector string
	)
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run Shepherd's controllers against a hub (for real deployments)",
		Long: `Run every Shepherd controller against a hub cluster: the detector (templates
to bindings), the scheduler, the binding controller (bindings to Works), the
execution controller (Works to members), the status controllers and the
cluster status controller.

--controllers picks the controllers that run, as kube-controller-manager
spells it: * for every controller, NAME to enable one, -NAME to disable one.

Run two or more replicas with --leader-elect: one acts, the others wait.
Prometheus metrics are served on --metrics-bind-address and /healthz and
/readyz on --health-probe-bind-address.

With --webhook-port, every replica also serves the hub's validating
webhooks: they refuse a HealthInterpreter or ResourceInterpreterCustomization
whose CEL does not compile, and a member's credentials Secret whose
kubeconfig is not self-contained. It makes its own certificate and adds its CA to the ValidatingWebhookConfiguration
deployed from config/controllermanager/webhook.yaml (the Service there
selects the controller manager's pods); with --webhook-url-configuration it
writes the configuration itself, pointing at --webhook-bind-address, for a
hub that reaches this process directly.`,
		Example: `  shepherd controller-manager --hub-kubeconfig hub.kubeconfig \
    --leader-elect --metrics-bind-address :8080 --health-probe-bind-address :8081

  # in the hub cluster, with the webhook behind the Service of config/controllermanager
  shepherd controller-manager --webhook-port 9443 \
    --webhook-dns-name shepherd-webhook.shepherd-system.svc

  # beside a hub started with "shepherd up --no-controllers"
  shepherd controller-manager --hub-kubeconfig .shepherd/kubeconfig \
    --webhook-port 9443 --webhook-bind-address 127.0.0.1 --webhook-url-configuration`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := controllermanager.ParseSelection(opts.Controllers, controllermanager.Names(controllermanager.HubControllers())); err != nil {
				return err
			}
			if opts.QPS <= 0 || opts.Burst <= 0 {
				return fmt.Errorf("--kube-api-qps %v and --kube-api-burst %d must both be positive", opts.QPS, opts.Burst)
			}
			if opts.Scheduling.Workers < 0 || opts.Execution.Workers < 0 {
				return fmt.Errorf("--scheduler-workers and --execution-workers must not be negative (0 takes the default)")
			}
			if opts.Descheduler.Threshold <= 0 {
				return fmt.Errorf("--unschedulable-threshold %s must be positive", opts.Descheduler.Threshold)
			}
			if opts.FederatedHPA.SyncPeriod <= 0 {
				return fmt.Errorf("--federatedhpa-sync-period %s must be positive", opts.FederatedHPA.SyncPeriod)
			}
			if opts.Execution.DriftRevertDelay <= 0 {
				return fmt.Errorf("--drift-revert-delay %s must be positive", opts.Execution.DriftRevertDelay)
			}
			if opts.Orphans.Period <= 0 {
				return fmt.Errorf("--orphan-sweep-period %s must be positive", opts.Orphans.Period)
			}
			if errs := validation.IsDNS1123Label(opts.ServiceImport.ClusterSet); len(errs) > 0 {
				return fmt.Errorf("--clusterset %q is not a valid ClusterSet ID: %s", opts.ServiceImport.ClusterSet, strings.Join(errs, "; "))
			}
			if opts.ServiceImport.EndpointGracePeriod <= 0 || opts.ServiceImport.MaxEndpointsPerCluster <= 0 {
				return fmt.Errorf("--mcs-endpoint-grace-period %s and --mcs-max-endpoints-per-cluster %d must be positive", opts.ServiceImport.EndpointGracePeriod, opts.ServiceImport.MaxEndpointsPerCluster)
			}
			if clusterSetSelector != "" {
				sel, err := labels.Parse(clusterSetSelector)
				if err != nil {
					return fmt.Errorf("--clusterset-selector %q: %w (write a label selector, e.g. mcs=enabled or tier in (prod,staging))", clusterSetSelector, err)
				}
				opts.ServiceImport.Members = sel
			}
			lease := cmp.Or(opts.LeaseDuration, controllermanager.DefaultLeaseDuration)
			renew := cmp.Or(opts.RenewDeadline, controllermanager.DefaultRenewDeadline)
			retry := cmp.Or(opts.RetryPeriod, controllermanager.DefaultRetryPeriod)
			if lease < 0 || renew < 0 || retry < 0 || !(lease > renew && renew > retry) {
				return fmt.Errorf("--leader-elect-lease-duration %s, --leader-elect-renew-deadline %s and --leader-elect-retry-period %s: each must be shorter than the one before (defaults 15s, 10s, 2s)", lease, renew, retry)
			}
			if webhook.Port < 0 || webhook.Port > 65535 {
				return fmt.Errorf("--webhook-port %d is not a port: use 1-65535, or 0 for no webhook", webhook.Port)
			}
			if webhook.Port > 0 {
				if net.ParseIP(webhook.BindAddress) == nil {
					return fmt.Errorf("--webhook-bind-address %q is not an IP: use e.g. 0.0.0.0 or 127.0.0.1", webhook.BindAddress)
				}
				opts.Webhook = &webhook
			}
			if err := loadSchedulerConfig(schedulerConfig, &opts.Scheduling); err != nil {
				return err
			}
			cfg, err := hub.RestConfig()
			if err != nil {
				return err
			}
			log := logging.New(cmd.ErrOrStderr(), verbose)
			logging.Route(log, 0)
			mgr, err := controllermanager.New(cfg, opts)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log.Info("starting the controller manager", "version", version.Version, "hub", cfg.Host, "leaderElection", opts.LeaderElection)
			if err := managerconfig.Run(logr.NewContext(ctx, log), mgr, 0); err != nil {
				return fmt.Errorf("controller manager: %w", err)
			}
			return nil
		},
	}
	hub.AddTo(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&opts.Controllers, "controllers", []string{"*"}, controllersUsage(controllermanager.HubControllers()))
	f.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" turns it off)`)
	f.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" turns them off)`)
	f.BoolVar(&opts.LeaderElection, "leader-elect", true, "elect a leader so only one replica acts")
	f.StringVar(&opts.Namespace, "namespace", controllermanager.DefaultNamespace, "namespace of the leader-election lease")
	f.StringVar(&opts.LeaderElectionIdentity, "leader-elect-identity", "", "this replica's name in the leader lease (default: host name and a random suffix; a pod's name is a good choice)")
	f.DurationVar(&opts.LeaseDuration, "leader-elect-lease-duration", 0, "how long a leader's lease lasts without renewal; other replicas wait this long before taking over (default 15s)")
	f.DurationVar(&opts.RenewDeadline, "leader-elect-renew-deadline", 0, "how long the leader keeps trying to renew before it stops acting (default 10s)")
	f.DurationVar(&opts.RetryPeriod, "leader-elect-retry-period", 0, "how often replicas try to acquire or renew the lease (default 2s)")
	f.StringVar(&opts.ClusterSecretsNamespace, "cluster-secrets-namespace", clusterclient.DefaultSecretsNamespace, "the only hub namespace members' credentials Secrets are read from (a Cluster's secretRef naming another namespace is refused)")
	f.DurationVar(&opts.ClusterStatus.ProbeInterval, "cluster-probe-interval", 0, "how often each member is probed (default 10s)")
	f.DurationVar(&opts.ClusterStatus.NotReadyGracePeriod, "cluster-taint-grace-period", 0, "how long a member stays NotReady or unreachable before it is tainted NoSchedule (default 40s)")
	f.DurationVar(&opts.ClusterStatus.NoExecuteGracePeriod, "cluster-no-execute-grace-period", 0, "how long a member stays NotReady or unreachable before it is tainted NoExecute and its workloads fail over, unless their policy tolerates the taint (default 5m; negative: never)")
	f.DurationVar(&opts.RetryMaxDelay, "retry-max-delay", controllerdeps.DefaultRetryMaxDelay, "the longest a controller waits before retrying an object whose reconcile failed; not negative (from 5ms, doubling; the scheduler and the execution controller back off from 1s to 5m)")
	f.IntVar(&opts.Scheduling.Workers, "scheduler-workers", 0, "bindings scheduled in parallel (default 16)")
	f.StringVar(&schedulerConfig, "scheduler-config", "", "SchedulerConfiguration file (config.shepherd.io/v1alpha1): the scheduler's profile, its name (the schedulerName served), plugins, weights and plugin args; checked before anything starts (default: the built-in profile; see docs/scheduling.md)")
	f.Int32Var(&opts.Scheduling.Limits.MaxReplicasPerWorkload, "max-replicas-per-workload", scheduler.DefaultMaxReplicasPerWorkload, "a workload with more replicas is Unschedulable (negative: no limit)")
	f.Int32Var(&opts.Scheduling.Limits.MaxReplicasPerCluster, "max-replicas-per-cluster", scheduler.DefaultMaxReplicasPerCluster, "a placement sending one cluster more replicas is Unschedulable (negative: no limit)")
	f.IntVar(&opts.Execution.Workers, "execution-workers", 0, "Works applied in parallel (default 32)")
	f.DurationVar(&opts.Descheduler.Threshold, "unschedulable-threshold", descheduler.DefaultThreshold, "how long replicas stay Pending unschedulable in a member before they are placed elsewhere (Divided by dynamic weights or Aggregated; a policy's replicaScheduling.unschedulableThresholdSeconds overrides it)")
	f.DurationVar(&opts.FederatedHPA.SyncPeriod, "federatedhpa-sync-period", federatedhpa.DefaultSyncPeriod, "how often each FederatedHPA reads its members' metrics and sets its target's replicas (a HorizontalPodAutoscaler's default)")
	f.DurationVar(&opts.Execution.DriftRevertDelay, "drift-revert-delay", execution.DefaultDriftRevertDelay, "how long a member edit of a field Shepherd applies is reported (Drifted=True) before Shepherd puts the field back, under applyStrategy.whenToApply Always")
	f.DurationVar(&opts.Orphans.Period, "orphan-sweep-period", orphans.DefaultPeriod, "how often each member is swept for objects Shepherd applied whose Work is gone (removed on their second sighting; one metadata list per kind the member serves)")
	f.DurationVar(&opts.ServiceImport.EndpointGracePeriod, "mcs-endpoint-grace-period", serviceimport.DefaultEndpointGracePeriod, "how long a member that stopped being Ready keeps its endpoints in multi-cluster Service imports before they are withdrawn")
	f.IntVar(&opts.ServiceImport.MaxEndpointsPerCluster, "mcs-max-endpoints-per-cluster", serviceimport.DefaultMaxEndpointsPerCluster, "the most endpoints one member contributes to one multi-cluster Service's import (the export's Ready condition says when it was capped)")
	f.StringVar(&clusterSetSelector, "clusterset-selector", "", "the Clusters of the ClusterSet, by their labels (default: every Cluster); the others get no multi-cluster Service imports and their exports are not imported")
	f.StringVar(&opts.ServiceImport.ClusterSet, "clusterset", serviceimport.DefaultClusterSet, "the ClusterSet's ID, written into every member as the About API's ClusterProperty clusterset.k8s.io (a DNS label)")
	f.Float32Var(&opts.QPS, "kube-api-qps", controllermanager.DefaultQPS, "queries per second to the hub, shared by all controllers")
	f.IntVar(&opts.Burst, "kube-api-burst", controllermanager.DefaultBurst, "burst of queries to the hub")
	f.IntVar(&webhook.Port, "webhook-port", 0, "serve the hub's validating webhooks (HealthInterpreters, ResourceInterpreterCustomizations, credentials Secrets) on this port (0: none)")
	f.StringVar(&webhook.BindAddress, "webhook-bind-address", "0.0.0.0", "IP the webhooks listen on")
	f.StringSliceVar(&webhook.DNSNames, "webhook-dns-name", nil, "DNS name of the webhook's certificate, e.g. the Service's NAME.NAMESPACE.svc (repeatable)")
	f.StringVar(&webhook.ConfigurationName, "webhook-configuration", admission.DefaultWebhookConfigurationName, "ValidatingWebhookConfiguration to publish the webhooks' CA in")
	f.BoolVar(&webhook.URLConfiguration, "webhook-url-configuration", false, "write the whole webhook configuration with a url: pointing at --webhook-bind-address, instead of adding the CA to the deployed one")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

// loadSchedulerConfig reads and checks the --scheduler-config file (none:
// the default profile) into the scheduling options. It runs before
// anything starts, so a bad file stops the command with the field at
// fault rather than a scheduler that fails later.
func loadSchedulerConfig(path string, o *scheduling.Options) error {
	if path == "" {
		return nil
	}
	p, err := profile.LoadFile(path, nil)
	if err != nil {
		return fmt.Errorf("--scheduler-config %w", err)
	}
	o.Profile = &p
	return nil
}

// controllersUsage is the help of --controllers, naming the controllers.
func controllersUsage(cs []controllermanager.Controller) string {
	return "controllers to run: * for all, NAME to enable one, -NAME to disable one (e.g. *,-descheduler); names: " +
		strings.Join(controllermanager.Names(cs), ", ")
}
