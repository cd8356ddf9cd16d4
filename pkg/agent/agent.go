// Package agent runs the agent of a Pull cluster: inside (or beside) one
// member cluster, with credentials for the hub that reach only that
// cluster's Works, Cluster status and Lease (see `shepherd register`).
//
// The agent runs the hub's own controllers, those the registry of package
// controllermanager marks Agent, in agent mode (controllerdeps.Deps'
// PullCluster), so Works are applied with the same rules as in push mode
// (ownership proven from the member object, conflicts, retention, deletion
// of owned objects only):
//
//   - execution: the Works of its execution namespace, applied to the
//     member it runs in;
//   - work status: each member object's status and health, into its Work;
//   - cluster status: the member's readiness, version, APIs and resource
//     summary, into its Cluster's status;
//   - the health interpreters and interpreter customizations defined on
//     the hub, read-only.
//
// Agents of one cluster elect a leader with the Lease
// clusterv1alpha1.AgentLeaseName in the cluster's execution namespace; the
// leader renews it, and the hub judges the cluster's readiness by those
// renewals, so a stopped agent makes its cluster Unknown and cluster
// failover follows as for an unreachable Push member. Every member write
// passes the lease's fence: an agent that lost the Lease writes nothing.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/orphans"
	"github.com/shepherd-io/shepherd/pkg/controllers/workstatus"
	"github.com/shepherd-io/shepherd/pkg/managerconfig"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/pkg/version"
)

// Defaults of Options. The Lease is renewed every RetryPeriod: 1,000
// agents renew 100 times a second at these values, the heartbeat rate
// Karmada's agents use too.
const (
	DefaultLeaseDuration = 40 * time.Second
	DefaultRenewDeadline = 30 * time.Second
	DefaultRetryPeriod   = 10 * time.Second
	DefaultRestartDelay  = 5 * time.Second
	DefaultHubGrace      = 30 * time.Second
)

// Options configure an agent. Zero values take the defaults.
type Options struct {
	// Cluster names the Pull cluster this agent serves (required).
	Cluster string
	// Identity names this agent in the Lease (default: the host name and
	// a random suffix).
	Identity string
	// RetryMaxDelay caps a controller's back-off before it retries an
	// object whose reconcile failed (default
	// controllerdeps.DefaultRetryMaxDelay).
	RetryMaxDelay time.Duration
	// LeaseDuration, RenewDeadline and RetryPeriod time the Lease: how
	// long it lasts without renewal (after which the hub deems the
	// cluster Unknown and another agent may take over), how long the
	// leader keeps trying to renew it, and how often it renews (defaults
	// DefaultLeaseDuration, DefaultRenewDeadline, DefaultRetryPeriod).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MetricsBindAddress and HealthProbeBindAddress serve Prometheus
	// metrics and /healthz, /readyz ("" or "0" turns them off).
	MetricsBindAddress, HealthProbeBindAddress string
	// GracefulShutdownTimeout bounds how long the controllers may take to
	// stop (default 30 s).
	GracefulShutdownTimeout time.Duration
	// RestartDelay is how long Run waits before starting again after the
	// agent lost its Lease or failed (default DefaultRestartDelay).
	RestartDelay time.Duration
	// HubGrace is how long Run keeps asking a hub that refuses the
	// agent's credentials, or does not know its cluster as a Pull cluster,
	// before it gives up (default DefaultHubGrace): a hub that has just
	// started refuses every request until its authorizer has loaded.
	HubGrace time.Duration

	// Clock is the agent's wall clock (default the real one): every time
	// the agent writes for the hub (its Cluster's lastProbeTime and Ready
	// transitions, its Works' statusTime, conditions and pod metrics'
	// sampleTime, its Lease's renewals) is read from it, and so is the
	// token's age. The hub orders the agent's statusTime and
	// lastProbeTime only against each other, and counts the Lease from
	// when it saw it renewed; a test gives a clock that is off from the
	// hub's to prove it (the chaos suite's skew-agent-clock fault).
	Clock clock.PassiveClock

	// TokenStore keeps the hub token the agent renews (see token.go), for
	// its next start; nil keeps it in memory only.
	TokenStore TokenStore

	// Controllers selects the agent's controllers, as --controllers
	// spells it (see controllermanager.ParseSelection); nil runs them all.
	Controllers []string

	// Options of the agent's controllers.
	Execution     execution.Options
	WorkStatus    workstatus.Options
	ClusterStatus clusterstatus.Options
	Orphans       orphans.Options
}

func (o Options) withDefaults() Options {
	o.LeaseDuration = cmp.Or(o.LeaseDuration, DefaultLeaseDuration)
	o.RenewDeadline = cmp.Or(o.RenewDeadline, DefaultRenewDeadline)
	o.RetryPeriod = cmp.Or(o.RetryPeriod, DefaultRetryPeriod)
	o.RestartDelay = cmp.Or(o.RestartDelay, DefaultRestartDelay)
	o.HubGrace = cmp.Or(o.HubGrace, DefaultHubGrace)
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Validate checks the options a user sets.
func (o Options) Validate() error {
	if o.Cluster == "" {
		return errors.New("the cluster name is required: pass the name the cluster was registered with")
	}
	if o.Controllers != nil {
		if _, err := controllermanager.ParseSelection(o.Controllers, controllermanager.Names(controllermanager.AgentControllers())); err != nil {
			return err
		}
	}
	if err := controllerdeps.CheckRetryMaxDelay(o.RetryMaxDelay); err != nil {
		return err
	}
	if o.RestartDelay < 0 || o.HubGrace < 0 {
		return fmt.Errorf("restart delay %s and hub grace %s: neither may be negative (0 takes the defaults %s and %s)", o.RestartDelay, o.HubGrace, DefaultRestartDelay, DefaultHubGrace)
	}
	d := o.withDefaults()
	if !(d.LeaseDuration > d.RenewDeadline && d.RenewDeadline > d.RetryPeriod && d.RetryPeriod > 0) {
		return fmt.Errorf("lease duration %s, renew deadline %s and retry period %s: each must be shorter than the one before (defaults %s, %s, %s)",
			d.LeaseDuration, d.RenewDeadline, d.RetryPeriod, DefaultLeaseDuration, DefaultRenewDeadline, DefaultRetryPeriod)
	}
	return nil
}

// New returns the agent's manager: the hub is reached with hubCfg (the
// credentials `shepherd register` made), the member with memberCfg.
func New(hubCfg, memberCfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	ns := names.ExecutionNamespace(opts.Cluster)
	lock, err := controllermanager.NewLeaseLock(hubCfg, ns, clusterv1alpha1.AgentLeaseName, opts.Identity, opts.RenewDeadline)
	if err != nil {
		return nil, fmt.Errorf("creating the agent's lease lock: %w", err)
	}
	fence := controllermanager.NewFence(newClockedLock(lock, opts.Clock), opts.RenewDeadline)
	clients, err := clusterclient.NewLocal(opts.Cluster, memberCfg, clusterclient.Options{})
	if err != nil {
		return nil, err
	}
	mgr, err := managerconfig.New(hubCfg, managerconfig.Options{
		Scheme: scheme.Scheme,
		// The agent sees its own execution namespace and its own Cluster:
		// what its credentials allow, and nothing a Pull cluster does not
		// need.
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject: map[client.Object]cache.ByObject{
				&clusterv1alpha1.Cluster{}: {Field: fields.OneTermEqualSelector("metadata.name", opts.Cluster)},
			},
		},
		NewClient: fence.NewClient,
		// Controller names repeat across the agents of `shepherd up` and
		// the hub's manager in one process, and across restarts.
		SkipNameValidation: true,
		LeaderElection: &managerconfig.LeaderElection{
			Namespace:     ns,
			ID:            clusterv1alpha1.AgentLeaseName,
			Lock:          fence,
			LeaseDuration: opts.LeaseDuration,
			RenewDeadline: opts.RenewDeadline,
			RetryPeriod:   opts.RetryPeriod,
		},
		GracefulShutdownTimeout: opts.GracefulShutdownTimeout,
		MetricsBindAddress:      opts.MetricsBindAddress,
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the agent: %w", err)
	}
	sel := controllermanager.AllControllers()
	if opts.Controllers != nil {
		if sel, err = controllermanager.ParseSelection(opts.Controllers, controllermanager.Names(controllermanager.AgentControllers())); err != nil {
			return nil, err
		}
	}
	// One interpreter per agent (made by SetupControllers): several agents
	// in one process (`shepherd up` with Pull members) each learn their
	// own.
	d := controllerdeps.Deps{
		Manager:       mgr,
		Fence:         fence.Check,
		Clients:       clients,
		PullCluster:   opts.Cluster,
		RetryMaxDelay: opts.RetryMaxDelay,
		Clock:         opts.Clock,
	}
	cfg := controllermanager.Config{Execution: opts.Execution, WorkStatus: opts.WorkStatus, ClusterStatus: opts.ClusterStatus, Orphans: opts.Orphans}
	if _, err := controllermanager.SetupControllers(d, cfg, controllermanager.AgentControllers(), sel); err != nil {
		return nil, fmt.Errorf("setting up the agent: %w", err)
	}
	return mgr, nil
}

// errHubUnreachable marks a Check failure that waiting can mend: the hub
// did not answer (down, restarting, or its network cut), unlike
// credentials it rejects or a cluster it does not know as a Pull cluster.
var errHubUnreachable = errors.New("the hub did not answer")

// Check makes sure the agent can serve cluster with hubCfg before it
// starts: the hub answers, accepts the credentials, lets them read the
// Cluster, and the Cluster is a Pull cluster. Each failure says what to do.
func Check(ctx context.Context, hubCfg *rest.Config, cluster string) error {
	c, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return fmt.Errorf("building the hub client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cl := &clusterv1alpha1.Cluster{}
	err = c.Get(ctx, types.NamespacedName{Name: cluster}, cl)
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the hub at %s rejects the agent's credentials (expired or revoked token): run `shepherd register %s --force` on the hub for new ones: %w", hubCfg.Host, cluster, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the hub at %s does not let these credentials read Cluster %q: they were issued for another cluster; start the agent with the cluster name `shepherd register` was given: %w", hubCfg.Host, cluster, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("cluster %q is not registered on the hub at %s: run `shepherd register %s` first", cluster, hubCfg.Host, cluster)
	case err != nil:
		return fmt.Errorf("reaching the hub at %s: %w: %w", hubCfg.Host, errHubUnreachable, err)
	}
	if cl.Spec.SyncMode != clusterv1alpha1.Pull {
		return fmt.Errorf("cluster %q is in %s mode: the hub applies its Works itself, and an agent would be a second writer; register a Pull cluster with `shepherd register`", cluster, cl.Spec.SyncMode)
	}
	return nil
}

// Run checks the hub (see Check), then runs the agent until ctx ends. A
// hub that does not answer yet is asked again every RestartDelay: an agent
// started while the hub restarts, or while its network is cut, must serve
// its cluster once the hub is back, whether or not something restarts the
// agent. A manager that stops by itself (its Lease lost, e.g. while the
// hub was unreachable) is started again after RestartDelay too: a lost
// Lease must not end the agent for good. Only a Check failure that waiting
// cannot mend (see errHubUnreachable) that lasts HubGrace, or ctx's end,
// returns.
func Run(ctx context.Context, hubCfg, memberCfg *rest.Config, opts Options, log logr.Logger) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	var refusedSince time.Time
	for {
		err := Check(ctx, hubCfg, opts.Cluster)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		// Neither is an error of the agent's: the hub's own state, which
		// the agent reports until it changes or the grace ends.
		if errors.Is(err, errHubUnreachable) {
			refusedSince = time.Time{}
			log.Info("waiting for the hub", "cluster", opts.Cluster, "reason", err.Error(), "after", opts.RestartDelay)
		} else {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			if time.Since(refusedSince) >= opts.HubGrace {
				return err
			}
			log.Info("the hub refuses the agent; asking again in case it has just started", "cluster", opts.Cluster, "reason", err.Error(), "after", opts.RestartDelay, "giving up in", opts.HubGrace-time.Since(refusedSince))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.RestartDelay):
		}
	}
	ctx = logr.NewContext(ctx, log)
	if cfg, token := withRenewableToken(hubCfg); token != nil {
		hub, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("building the hub client: %w", err)
		}
		hubCfg = cfg
		r := &tokenRenewer{hub: hub, token: token, cluster: opts.Cluster, store: opts.TokenStore, log: log.WithName("token"), now: opts.Clock.Now}
		go r.run(ctx)
	} else {
		log.V(1).Info("the hub credentials are not a renewable token: not renewing them", "cluster", opts.Cluster)
	}
	for {
		mgr, err := New(hubCfg, memberCfg, opts)
		if err == nil {
			log.Info("starting the agent", "version", version.Version, "cluster", opts.Cluster, "hub", hubCfg.Host)
			err = managerconfig.Run(ctx, mgr, 0)
		}
		if ctx.Err() != nil {
			// Told to stop: a manager that would not (managerconfig.Run)
			// says so.
			return err
		}
		log.Error(err, "the agent stopped; starting again", "cluster", opts.Cluster, "after", opts.RestartDelay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.RestartDelay):
		}
	}
}
