package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/controller"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/webhook"
)

// podReschedulerFlags are the flags of `shepherd pod-rescheduler`.
type podReschedulerFlags struct {
	kubeconfig, context string
	opts                podrescheduler.Options
	detection           controller.Detection
	verbose             int
}

func newPodReschedulerCommand() *cobra.Command {
	f := podReschedulerFlags{detection: controller.DefaultDetection()}
	cmd := &cobra.Command{
		Use:   "pod-rescheduler",
		Short: "Move pods that keep failing on a node to other nodes (controller and admission webhook)",
		Long: `Run the pod rescheduler against a cluster: a controller that deletes the
failed pods of workloads annotated with shepherd.io/scheduling-retries (and
recreates owner-less ones), recording the nodes they failed on, and a
mutating admission webhook that copies those nodes onto the replacement
pods for the PodRescheduling scheduler plugin ("shepherd kube-scheduler").

The webhook generates its own CA and serving certificate on start and adds
the CA to the caBundle of --webhook-configuration, which must exist
(config/podrescheduler/webhook.yaml). With --leader-elect only one replica
runs the controller; every replica serves the webhook.

See docs/pod-rescheduling.md.`,
		Example: `  # in a cluster, with the manifests of config/podrescheduler
  shepherd pod-rescheduler --leader-elect

  # against a member of "shepherd up", webhook on loopback
  shepherd pod-rescheduler --kubeconfig ~/.shepherd/members/member1.kubeconfig \
    --leader-elect=false --webhook-bind-address 127.0.0.1 --webhook-url-configuration`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPodRescheduler(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, else in-cluster)")
	fl.StringVar(&f.context, "context", "", "context in the kubeconfig (default: its current context)")
	fl.BoolVar(&f.opts.LeaderElection, "leader-elect", true, "elect a leader so only one replica runs the controller")
	fl.StringVar(&f.opts.Namespace, "namespace", podrescheduler.DefaultNamespace, "namespace of the leader-election lease")
	fl.StringVar(&f.opts.MetricsBindAddress, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" turns it off)`)
	fl.StringVar(&f.opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz ("0" turns them off)`)
	fl.StringVar(&f.opts.Webhook.BindAddress, "webhook-bind-address", "0.0.0.0", "IP the webhook listens on")
	fl.IntVar(&f.opts.Webhook.Port, "webhook-port", 9443, "port the webhook listens on (0 picks a free one)")
	fl.StringVar(&f.opts.Webhook.ConfigurationName, "webhook-configuration", webhook.DefaultConfigurationName, "MutatingWebhookConfiguration whose caBundle gets the webhook's CA")
	fl.BoolVar(&f.opts.Webhook.URLConfiguration, "webhook-url-configuration", false, "write the whole webhook configuration with a url: pointing at this process (clusters that reach it directly, e.g. on loopback)")
	fl.StringSliceVar(&f.opts.Webhook.DNSNames, "webhook-dns-name", []string{"shepherd-pod-rescheduler.shepherd-system.svc"}, "DNS names of the webhook's serving certificate (its Service)")
	fl.Float64Var(&f.opts.Controller.ReschedulesPerSecond, "reschedules-per-second", 1, "how many pods may be deleted or recreated per second, across all workloads")
	fl.IntVar(&f.opts.Controller.Burst, "reschedule-burst", 10, "burst of --reschedules-per-second")
	fl.BoolVar(&f.detection.OOMKilled, "detect-oom-killed", f.detection.OOMKilled, "a container OOM-killed is a failure")
	fl.BoolVar(&f.detection.CrashLoopBackOff, "detect-crash-loop", f.detection.CrashLoopBackOff, "a container in CrashLoopBackOff is a failure")
	fl.StringSliceVar(&f.detection.FailedReasons, "failed-reasons", f.detection.FailedReasons, `status.reason values of Failed pods that are failures ("X*" matches by prefix, "*" every Failed pod)`)
	fl.Int32Var(&f.detection.RestartThreshold, "restart-threshold", f.detection.RestartThreshold, "restarts of a container that make a failure (0 turns it off)")
	fl.IntVarP(&f.verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

func runPodRescheduler(cmd *cobra.Command, f podReschedulerFlags) error {
	cfg, err := kubeconfig.Local(f.kubeconfig, f.context).Load()
	if err != nil {
		return err
	}
	log := logging.New(cmd.ErrOrStderr(), f.verbose)
	logging.Route(log, 0)
	f.opts.Logger = log
	f.opts.Controller.Detection = &f.detection

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := podrescheduler.Start(ctx, cfg, f.opts)
	if err != nil {
		return err
	}
	if err := r.Wait(); err != nil {
		return fmt.Errorf("pod rescheduler: %w", err)
	}
	return nil
}
