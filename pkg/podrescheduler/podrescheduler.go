// Package podrescheduler moves pods that keep failing on a node (OOM
// kills, crash loops, kubelet admission errors such as NUMA or device
// mismatches) to other nodes, up to a retry limit the workload opts into
// with the annotation shepherd.io/scheduling-retries. See
// docs/pod-rescheduling.md.
//
// It has three parts, each in its own package:
//   - controller: watches pods, records the failed pod's node on its
//     workload and deletes the pod (or recreates an owner-less pod);
//   - webhook: copies the workload's nodes-tried list onto new pods;
//   - schedplugin: a kube-scheduler plugin keeping pods off those nodes.
//
// Start runs the first two against one cluster; the plugin runs inside the
// cluster's scheduler (simmember.Options.SchedulerPlugins, or `shepherd
// kube-scheduler`).
package podrescheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/managerconfig"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/controller"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/webhook"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload"
)

// Defaults of Options.
const (
	DefaultNamespace        = "shepherd-system"
	DefaultLeaderElectionID = "shepherd-pod-rescheduler"
)

// shutdownTimeout bounds the controller's stop, so that `shepherd up`,
// which runs one rescheduler per member, still stops within its 5 s.
const shutdownTimeout = 2 * time.Second

// Options configure a pod rescheduler. Zero values take the defaults.
type Options struct {
	Controller controller.Options
	// Webhook configures the webhook server; Start fills in its Client,
	// its Cache (the manager's, shared with the controller) and, when
	// unset, its Logger.
	Webhook webhook.Options
	// MetricsBindAddress serves Prometheus metrics; "" or "0" turns them
	// off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "" or "0" turns
	// them off.
	HealthProbeBindAddress string
	// LeaderElection makes only one replica run the controller; the
	// webhook serves on every replica.
	LeaderElection bool
	// Namespace holds the leader-election lease (default shepherd-system).
	Namespace string
	// LeaderElectionID names the lease (default shepherd-pod-rescheduler).
	LeaderElectionID string
	// Logger receives the logs (default: discard).
	Logger logr.Logger
}

// Rescheduler is a running controller and webhook.
type Rescheduler struct {
	// Webhook is the running webhook server (its URL and CA).
	Webhook *webhook.Server

	cancel context.CancelFunc
	done   chan struct{}
	err    error // written before done is closed
}

// Start runs the controller and the webhook against the cluster of cfg
// until ctx ends or Stop is called. It returns once the webhook serves
// and its configuration is in place; the controller then catches up on
// the pods that already failed from its initial list.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Rescheduler, error) {
	opts = opts.withDefaults()
	log := opts.Logger.WithName("pod-rescheduler")
	direct, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("pod rescheduler: creating client: %w", err)
	}
	// The namespace holds the leader lease and the webhook CA Leases.
	if opts.LeaderElection || !opts.Webhook.URLConfiguration {
		if err := ensureNamespace(ctx, direct, opts.Namespace); err != nil {
			return nil, err
		}
	}
	mo := managerconfig.Options{
		Scheme: clientgoscheme.Scheme,
		Logger: log,
		// Only pods and their workloads' metadata are cached; managed
		// fields are the bulk of a pod and never read.
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		MetricsBindAddress:     opts.MetricsBindAddress,
		HealthProbeBindAddress: opts.HealthProbeBindAddress,
		// One rescheduler per member runs in `shepherd up`: the same
		// controller name in several managers of one process is intended.
		SkipNameValidation:      true,
		GracefulShutdownTimeout: shutdownTimeout,
	}
	if opts.LeaderElection {
		mo.LeaderElection = &managerconfig.LeaderElection{Namespace: opts.Namespace, ID: opts.LeaderElectionID}
	}
	mgr, err := managerconfig.New(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("pod rescheduler: creating manager: %w", err)
	}
	if err := controller.Setup(mgr, opts.Controller); err != nil {
		return nil, fmt.Errorf("pod rescheduler: setting up the controller: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	wopts := opts.Webhook
	wopts.Client = direct
	if wopts.Cache, err = workload.Cache(ctx, mgr.GetCache()); err != nil {
		cancel()
		return nil, fmt.Errorf("pod rescheduler: %w", err)
	}
	if wopts.Liveness.Namespace == "" {
		wopts.Liveness.Namespace = opts.Namespace
	}
	if wopts.Logger.GetSink() == nil {
		wopts.Logger = log.WithName("webhook")
	}
	hook, err := webhook.Start(ctx, wopts)
	if err != nil {
		cancel()
		return nil, err
	}
	r := &Rescheduler{Webhook: hook, cancel: cancel, done: make(chan struct{})}
	go func() {
		// Bounded, like the controller manager's and the agent's: told to
		// stop while its member is unreachable, the manager would wait for
		// its caches for as long as the member stays away.
		err := managerconfig.Run(ctx, mgr, 0)
		cancel()
		r.err = errors.Join(err, hook.Stop())
		close(r.done)
	}()
	log.Info("pod rescheduler started", "webhook", hook.URL(webhook.Path), "leaderElection", opts.LeaderElection)
	return r, nil
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.LeaderElectionID == "" {
		o.LeaderElectionID = DefaultLeaderElectionID
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

// Done is closed once the controller and the webhook have stopped.
func (r *Rescheduler) Done() <-chan struct{} { return r.done }

// Wait blocks until both have stopped and returns their failure, if any.
func (r *Rescheduler) Wait() error {
	<-r.done
	return r.err
}

// Stop stops both and waits for them.
func (r *Rescheduler) Stop() error {
	r.cancel()
	return r.Wait()
}

// ensureNamespace creates the leader-election namespace if it is missing.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s for leader election: %w", name, err)
	}
	return nil
}
