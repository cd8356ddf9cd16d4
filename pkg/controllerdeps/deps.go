// Package controllerdeps is the contract every Shepherd controller is set
// up by: one Deps value carries what controllers share (the manager with
// its client, cache and indexer, the leader fence, the member client
// cache, the resource interpreter, agent mode), and every controller
// package exports
//
//	func Setup(d controllerdeps.Deps, opts Options) error
//
// (or Setup(d) when it has nothing to configure), and builds its
// controller with d.ControllerOptions (workers and the retry back-off, the
// same for all). Controllers are started
// from one ordered registry (package controllermanager), which both the
// controller manager and the agent of a Pull cluster use.
//
// This package sits below every controller and imports none of them.
package controllerdeps

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// DefaultRetryMaxDelay is the longest a controller waits before retrying
// an object whose reconcile failed. controller-runtime's own cap, 1,000 s,
// left an object that failed through a long hub outage untouched for up
// to 16 minutes after the hub came back.
const DefaultRetryMaxDelay = time.Minute

// retryBaseDelay is the first retry's wait, controller-runtime's.
const retryBaseDelay = 5 * time.Millisecond

// RecorderPrefix starts the name every controller's events are reported
// under: "shepherd-" and the controller's name.
const RecorderPrefix = "shepherd-"

// Deps are the dependencies shared by Shepherd's controllers.
type Deps struct {
	// Manager gives the hub client (writes pass the fence when leader
	// election is on), the cache, the field indexer and the API reader.
	Manager manager.Manager
	// Fence, when set, is asked before every write to a member; an error
	// refuses the write (a leader that may have lost its lease). Hub
	// writes are fenced by the manager's client itself.
	Fence func() error
	// Clients is the member client cache, shared so that each member gets
	// one set of connections. WithDefaults makes one reading members'
	// credentials through the manager's client.
	Clients *clusterclient.Cache
	// Interpreter is what the controllers know of kinds (built-in, then
	// ResourceInterpreterCustomizations, then HealthInterpreters), one per
	// process or agent: what the customization and health interpreter
	// controllers teach it, every controller knows at once. WithDefaults
	// makes a new one.
	Interpreter *interpreter.Layered
	// PullCluster, when set, runs the controllers as the agent of that
	// Pull cluster: they serve that cluster only, Clients reaches its
	// member (clusterclient.NewLocal), and nothing is written that the
	// agent's credentials do not allow.
	PullCluster string
	// RetryMaxDelay caps the back-off before a controller retries an
	// object whose reconcile failed (exponential from 5 ms); 0 is
	// DefaultRetryMaxDelay. The scheduler and the execution controller
	// keep back-offs of their own (from 1 s, up to 5 minutes).
	RetryMaxDelay time.Duration
	// Clock stamps the times the controllers write for another process
	// to compare (a Cluster's lastProbeTime, a Work's statusTime, pod
	// metrics' sampleTime, conditions' lastTransitionTime, drift's
	// firstSeenTime) and is what they compare their own stamps against;
	// WithDefaults makes it the real clock. An agent's stamps are on its
	// own clock, which may be off from the hub's: the hub orders a
	// cluster's statusTime and lastProbeTime only against each other
	// (docs/scheduling.md, "One clock per cluster"). Durations a process measures for itself (metrics,
	// back-offs) keep the real clock: a wall clock set off does not
	// change them.
	Clock clock.PassiveClock

	// once records what is set up once for all the controllers sharing
	// these Deps (the cache indexes of package index); WithDefaults makes
	// it, so Deps made by one WithDefaults call share it.
	once *onceSet
}

// onceSet is the keys of the set-ups done.
type onceSet struct {
	mu   sync.Mutex
	done map[string]bool
}

// Once runs f the first time key is asked for among the controllers sharing
// d (made by one WithDefaults call), and returns its error; later calls
// with key do nothing. Every cache index of the hub (package index) is
// registered this way, once: controller-runtime refuses a second
// registration of one index name, and an index two controllers read is
// asked for by both. A failed f is not recorded, so the next call tries again.
func (d Deps) Once(key string, f func() error) error {
	if d.once == nil {
		return f()
	}
	d.once.mu.Lock()
	defer d.once.mu.Unlock()
	if d.once.done[key] {
		return nil
	}
	if err := f(); err != nil {
		return err
	}
	d.once.done[key] = true
	return nil
}

// WithDefaults fills what is unset: the member client cache, the
// interpreter and the clock. Call it once where controllers are wired
// together, so that they share what it makes; a controller's Setup calls
// it too, for tests that set up one controller alone.
func (d Deps) WithDefaults() Deps {
	if d.Clients == nil {
		d.Clients = clusterclient.NewCache(d.Manager.GetClient(), clusterclient.Options{})
	}
	if d.Interpreter == nil {
		d.Interpreter = interpreter.New()
	}
	if d.once == nil {
		d.once = &onceSet{done: map[string]bool{}}
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	return d
}

// Client is the manager's hub client.
func (d Deps) Client() client.Client { return d.Manager.GetClient() }

// Recorder is the event recorder of the named controller: its events are
// reported by "shepherd-<name>".
func (d Deps) Recorder(name string) events.EventRecorder {
	return d.Manager.GetEventRecorder(RecorderPrefix + name)
}

// CheckRetryMaxDelay refuses a negative --retry-max-delay (0 takes
// DefaultRetryMaxDelay).
func CheckRetryMaxDelay(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--retry-max-delay %s is negative: give a duration such as 30s or 2m, or 0 for the default (%s)", d, DefaultRetryMaxDelay)
	}
	return nil
}

// ControllerOptions are the options every controller is built with:
// workers reconciling at once (0 takes controller-runtime's default, one)
// and the retry back-off (RetryMaxDelay).
func (d Deps) ControllerOptions(workers int) controller.Options {
	return TypedControllerOptions[reconcile.Request](d, workers)
}

// TypedControllerOptions are ControllerOptions for a controller whose
// queue holds requests of type T.
func TypedControllerOptions[T comparable](d Deps, workers int) controller.TypedOptions[T] {
	maxDelay := d.RetryMaxDelay
	if maxDelay <= 0 {
		maxDelay = DefaultRetryMaxDelay
	}
	return controller.TypedOptions[T]{
		MaxConcurrentReconciles: workers,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[T](retryBaseDelay, maxDelay),
		CacheSyncTimeout:        CacheSyncTimeout,
	}
}

// CacheSyncTimeout is how long a controller waits for its caches to fill
// at start before its process gives up and exits. controller-runtime's
// default, 2 minutes, was too short for a hub restarted under load (a
// large hub's lists, or both cores busy catching up after a SIGKILL): the
// controller manager exited and started over, again under the same load.
// Its caches fill as fast as the API server answers; waiting longer only
// costs the time it takes.
const CacheSyncTimeout = 10 * time.Minute

// Agent reports whether the controllers run as a Pull cluster's agent.
func (d Deps) Agent() bool { return d.PullCluster != "" }

// SetCondition is meta.SetStatusCondition with a changed condition's
// transition time read from clk (Deps.Clock), not from time.Now: a
// condition an agent writes is stamped on the agent's clock like every
// other time it writes.
func SetCondition(conditions *[]metav1.Condition, c metav1.Condition, clk clock.PassiveClock) bool {
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.NewTime(clk.Now())
	}
	return meta.SetStatusCondition(conditions, c)
}
