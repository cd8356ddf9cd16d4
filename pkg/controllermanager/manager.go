// Package controllermanager assembles every Shepherd controller into one
// controller-runtime manager with leader election, a metrics endpoint and
// health probes. `shepherd controller-manager` runs it against a real hub;
// `shepherd up` runs the same thing in-process beside the embedded hub.
package controllermanager

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/managerconfig"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Defaults of Options.
const (
	DefaultNamespace        = "shepherd-system"
	DefaultLeaderElectionID = "shepherd-controller-manager"
	// DefaultQPS and DefaultBurst rate-limit the hub client shared by every
	// controller. Propagating one Deployment takes about ten hub writes
	// (binding, targets, Work, statuses), so client-go's usual 20 QPS would
	// cap the fleet at two workloads a second.
	DefaultQPS   = 500
	DefaultBurst = 1000
)

// Options configure the manager and its controllers. Zero values take the
// controllers' own defaults.
type Options struct {
	// MetricsBindAddress serves Prometheus metrics; "0" or "" turns them off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" or "" turns them off.
	HealthProbeBindAddress string
	// LeaderElection makes only one replica act at a time.
	LeaderElection bool
	// Namespace holds the leader-election lease (default shepherd-system).
	Namespace string
	// LeaderElectionID names the lease.
	LeaderElectionID string
	// QPS and Burst rate-limit the hub client (defaults DefaultQPS, DefaultBurst).
	QPS   float32
	Burst int
	// GracefulShutdownTimeout bounds how long the controllers may take to
	// stop (default 30 s, controller-runtime's).
	GracefulShutdownTimeout time.Duration
	// LeaderElectionIdentity names this replica in the lease (default: the
	// host name and a random suffix).
	LeaderElectionIdentity string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (defaults 15 s, 10 s and 2 s, controller-runtime's).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ClusterSecretsNamespace is the only hub namespace members'
	// credentials Secrets are read from (default shepherd-system).
	ClusterSecretsNamespace string
	// RetryMaxDelay caps a controller's back-off before it retries an
	// object whose reconcile failed (default
	// controllerdeps.DefaultRetryMaxDelay).
	RetryMaxDelay time.Duration
	// SkipNameValidation lets a process start the controllers more than
	// once (a local fleet started again by a test or a benchmark):
	// controller-runtime otherwise refuses a controller name it has seen.
	SkipNameValidation bool

	// Webhook, when set, serves the hub's validating webhooks (package
	// admission) on every replica, leader or not: the API server may call
	// any of them. Readiness waits for its CA to be published.
	Webhook *admission.WebhookOptions
	// Interpreter is what the controllers know of kinds; nil: a new one
	// (the built-in kinds, then what ResourceInterpreterCustomizations and
	// HealthInterpreters teach it).
	Interpreter *interpreter.Layered
	// Controllers selects the controllers that run, as --controllers
	// spells it (see ParseSelection); nil runs them all.
	Controllers []string

	// Config holds the controllers' options.
	Config
}

// New returns a manager with every controller registered; start it with
// mgr.Start(ctx).
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if err := controllerdeps.CheckRetryMaxDelay(opts.RetryMaxDelay); err != nil {
		return nil, err
	}
	sel := AllControllers()
	if opts.Controllers != nil {
		var err error
		if sel, err = ParseSelection(opts.Controllers, Names(HubControllers())); err != nil {
			return nil, err
		}
	}
	opts.Namespace = cmp.Or(opts.Namespace, DefaultNamespace)
	opts.LeaderElectionID = cmp.Or(opts.LeaderElectionID, DefaultLeaderElectionID)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	if opts.QPS > 0 {
		cfg.QPS = opts.QPS
	}
	if opts.Burst > 0 {
		cfg.Burst = opts.Burst
	}
	// The namespace holds the leader lease and the webhook CA Leases.
	if opts.LeaderElection || (opts.Webhook != nil && !opts.Webhook.URLConfiguration) {
		if err := ensureNamespace(cfg, opts.Namespace); err != nil {
			return nil, err
		}
	}
	mo, fence, err := managerOptions(cfg, opts)
	if err != nil {
		return nil, err
	}
	mgr, err := managerconfig.New(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("creating the controller manager: %w", err)
	}
	if opts.Webhook != nil {
		if err := addWebhook(mgr, cfg, webhookOptions(opts)); err != nil {
			return nil, err
		}
	}
	d := controllerdeps.Deps{
		Manager: mgr,
		// One member client cache: each member gets one set of
		// connections.
		Clients:       clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{SecretsNamespace: opts.ClusterSecretsNamespace}),
		Interpreter:   opts.Interpreter,
		RetryMaxDelay: opts.RetryMaxDelay,
	}
	if fence != nil {
		d.Fence = fence.Check
	}
	started, err := SetupControllers(d, opts.Config, HubControllers(), sel)
	if err != nil {
		return nil, err
	}
	mgr.GetLogger().V(1).Info("controllers set up", "controllers", started)
	return mgr, nil
}

// managerOptions are the controller manager's manager settings and, with
// leader election, the fence every hub write of the controllers (and every
// member write of the execution controller) passes; nil without.
func managerOptions(cfg *rest.Config, opts Options) (managerconfig.Options, *Fence, error) {
	mo := managerconfig.Options{
		Scheme:                  scheme.Scheme,
		MetricsBindAddress:      opts.MetricsBindAddress,
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		SkipNameValidation:      opts.SkipNameValidation,
		GracefulShutdownTimeout: opts.GracefulShutdownTimeout,
	}
	if !opts.LeaderElection {
		return mo, nil, nil
	}
	renew := cmp.Or(opts.RenewDeadline, DefaultRenewDeadline)
	fence, err := NewLeaseFence(cfg, opts.Namespace, opts.LeaderElectionID, opts.LeaderElectionIdentity, renew)
	if err != nil {
		return mo, nil, fmt.Errorf("creating the leader-election lock: %w", err)
	}
	mo.NewClient = fence.NewClient
	mo.LeaderElection = &managerconfig.LeaderElection{
		Namespace:     opts.Namespace,
		ID:            opts.LeaderElectionID,
		Lock:          fence,
		LeaseDuration: opts.LeaseDuration,
		RenewDeadline: opts.RenewDeadline,
		RetryPeriod:   opts.RetryPeriod,
	}
	return mo, fence, nil
}

// webhookOptions are opts.Webhook with what it leaves unset taken from
// the manager's options: the CA Leases beside the leader Lease, named by
// this replica, and the members' Secrets namespace.
func webhookOptions(opts Options) admission.WebhookOptions {
	w := *opts.Webhook
	w.Liveness.Namespace = cmp.Or(w.Liveness.Namespace, opts.Namespace)
	w.Liveness.Identity = cmp.Or(w.Liveness.Identity, opts.LeaderElectionIdentity)
	w.SecretsNamespace = cmp.Or(w.SecretsNamespace, opts.ClusterSecretsNamespace)
	return w
}

// webhookRunnable serves the hub's validating webhooks (HealthInterpreters,
// ResourceInterpreterCustomizations, credentials Secrets) for as long as
// the manager runs.
type webhookRunnable struct {
	client client.Client
	opts   admission.WebhookOptions
	ready  atomic.Bool
}

// NeedLeaderElection: every replica serves admission requests.
func (w *webhookRunnable) NeedLeaderElection() bool { return false }

func (w *webhookRunnable) Start(ctx context.Context) error {
	s, err := admission.ServeWebhook(ctx, w.client, w.opts, logr.FromContextOrDiscard(ctx).WithName("webhook"))
	if err != nil {
		return err
	}
	w.ready.Store(true)
	<-s.Done()
	w.ready.Store(false)
	// nil once ctx ended; the server's error if it failed by itself, which
	// stops the manager rather than leave it running without its webhook.
	return s.Stop()
}

func (w *webhookRunnable) check(*http.Request) error {
	if !w.ready.Load() {
		return errors.New("the validating webhooks (HealthInterpreters, ResourceInterpreterCustomizations, credentials Secrets) are not serving yet")
	}
	return nil
}

func addWebhook(mgr ctrl.Manager, cfg *rest.Config, o admission.WebhookOptions) error {
	// Uncached: it writes the webhook configuration before the cache runs.
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	w := &webhookRunnable{client: c, opts: o}
	if err := mgr.Add(w); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("webhook", w.check)
}

// ensureNamespace creates the leader-election namespace if it is missing.
func ensureNamespace(cfg *rest.Config, name string) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s for leader election: %w", name, err)
	}
	return nil
}
