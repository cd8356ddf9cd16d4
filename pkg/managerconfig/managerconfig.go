// Package managerconfig builds the controller-runtime manager of each of
// Shepherd's long-running processes (the controller manager, the agent of a
// Pull cluster, the pod rescheduler) from one set of settings: metrics and
// probe endpoints, leader election, graceful shutdown, and the /healthz and
// /readyz checks. What differs between them (the scheme, the cache's
// scope, a client behind a leader fence) comes in as Options, so the
// shared settings are written once and cannot drift apart.
package managerconfig

import (
	"cmp"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/shepherd-io/shepherd/pkg/logging"
)

// Options are a manager's settings. Zero values take the defaults.
type Options struct {
	// Scheme the manager's clients and cache use (required).
	Scheme *runtime.Scheme
	// Logger is the manager's logger; the zero Logger is
	// controller-runtime's global one.
	Logger logr.Logger
	// Cache scopes and trims the manager's cache.
	Cache cache.Options
	// NewClient builds the manager's client (to wrap it, e.g. in a leader
	// fence); nil: controller-runtime's.
	NewClient client.NewClientFunc
	// MetricsBindAddress serves Prometheus metrics and
	// HealthProbeBindAddress /healthz and /readyz; "" or "0" turns each off.
	MetricsBindAddress, HealthProbeBindAddress string
	// SkipNameValidation lets one process build controllers of the same
	// name more than once (several agents or reschedulers in `shepherd up`,
	// a manager started again after a lost Lease): controller-runtime
	// otherwise refuses a name it has seen.
	SkipNameValidation bool
	// GracefulShutdownTimeout bounds how long the runnables may take to
	// stop; not positive: controller-runtime's default, 30 s.
	GracefulShutdownTimeout time.Duration
	// LeaderElection, when set, makes only the holder of its Lease run the
	// runnables that need leader election; nil: no leader election.
	LeaderElection *LeaderElection
}

// LeaderElection configures the Lease a manager's replicas elect a leader
// with. The Lease is released on a clean stop, so a successor need not
// wait for it to expire.
type LeaderElection struct {
	// Namespace and ID name the Lease.
	Namespace, ID string
	// Lock, when set, is the lock to elect with (a leader fence wrapping
	// the Lease); nil: controller-runtime makes one from Namespace and ID.
	Lock resourcelock.Interface
	// LeaseDuration, RenewDeadline and RetryPeriod time the Lease; not
	// positive: controller-runtime's defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// quietShutdown is the manager's logger, l or controller-runtime's global
// one, with errors that are a context's end demoted to V(1) information:
// the reconciles and requests cut off when the process stops (see
// logging.CanceledAsInfo).
func quietShutdown(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		l = ctrl.Log
	}
	return logging.CanceledAsInfo(l, 1)
}

// ManagerOptions are o as controller-runtime's options.
func (o Options) ManagerOptions() ctrl.Options {
	out := ctrl.Options{
		Scheme:                  o.Scheme,
		Logger:                  quietShutdown(o.Logger),
		Cache:                   o.Cache,
		NewClient:               o.NewClient,
		Metrics:                 metricsserver.Options{BindAddress: cmp.Or(o.MetricsBindAddress, "0")},
		HealthProbeBindAddress:  cmp.Or(o.HealthProbeBindAddress, "0"),
		Controller:              config.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
		GracefulShutdownTimeout: positive(o.GracefulShutdownTimeout),
	}
	if out.Cache.DefaultTransform == nil {
		// managedFields are often the larger half of a stored object, no
		// controller reads them from the cache, and every read from it
		// deep-copies what it holds: they are dropped as objects enter
		// it. An update of an object read from the cache leaves them out,
		// which the API server takes as "keep the stored ones".
		out.Cache.DefaultTransform = cache.TransformStripManagedFields()
	}
	if le := o.LeaderElection; le != nil {
		out.LeaderElection = true
		out.LeaderElectionNamespace = le.Namespace
		out.LeaderElectionID = le.ID
		out.LeaderElectionResourceLockInterface = le.Lock
		out.LeaderElectionReleaseOnCancel = true
		out.LeaseDuration = positive(le.LeaseDuration)
		out.RenewDeadline = positive(le.RenewDeadline)
		out.RetryPeriod = positive(le.RetryPeriod)
	}
	return out
}

// New returns a manager for cfg with o's settings, its /healthz and
// /readyz answering as long as it runs (a caller adds readiness checks of
// its own, e.g. a webhook's).
func New(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, o.ManagerOptions())
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// positive is d, or nil (the library's default) when d is not positive.
func positive(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return &d
}
