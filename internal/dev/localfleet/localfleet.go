// Package localfleet runs a whole Shepherd fleet in one process: the
// embedded hub, N simulated member clusters, and the controller manager.
// `shepherd up` and the end-to-end tests use it. Members are registered
// through membership.Join, the same path a real cluster takes: a
// credentials Secret and a Cluster object, after a reachability check.
package localfleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/config/crd"
	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/schedplugin"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/webhook"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/pkg/webhookserver"
)

// Options describe the local fleet.
type Options struct {
	// DataDir holds everything: the hub in DataDir (kubeconfig at
	// DataDir/kubeconfig), member NAME in DataDir/members/NAME with its
	// kubeconfig at DataDir/members/NAME.kubeconfig.
	DataDir string
	// Fleet lists the members; empty runs the hub alone.
	Fleet simmember.FleetSpec
	// HubPort fixes the hub's API server port (0 picks a free one).
	HubPort int
	// HubMaxRequestsInFlight limits the requests the hub's API server
	// serves at once (controlplane.Options.MaxRequestsInFlight; 0: the
	// default 600).
	HubMaxRequestsInFlight int
	// HubEtcdVia routes the hub's API server to its etcd
	// (controlplane.Options.EtcdVia), on every start of the hub.
	HubEtcdVia func(etcdAddr string) (string, error)
	// Controllers configure the controller manager. Without it (NoControllers)
	// only the clusters run.
	Controllers controllermanager.Options
	// NoControllers skips the controller manager.
	NoControllers bool
	// MembersAPIOnly starts members without controllers, scheduler or
	// pods (simmember.Options.APIOnly): for benchmarks of the hub.
	MembersAPIOnly bool
	// KwokStages are extra kwok stages every member plays
	// (simmember.Options.KwokStages).
	KwokStages [][]byte
	// RayOperator runs the simulated Ray operator in every member
	// (simmember.Options.RayOperator), and the hub serves RayClusters too
	// (simmember.RayClusterCRD), so that a RayCluster applied to the hub
	// is a template Shepherd places and the members run its pods.
	RayOperator bool
	// Agent configures the agents of Pull members (the members with
	// Pull set), which run in-process with the credentials `shepherd
	// register` issues.
	Agent agent.Options
	// Logger receives the fleet's logs.
	Logger logr.Logger
}

// Fleet is a running local fleet.
type Fleet struct {
	Hub     *controlplane.ControlPlane
	Members []*simmember.Member

	// podReschedulers run each member's pod rescheduler and webhook.
	podReschedulers []*podrescheduler.Rescheduler
	// webhook serves the hub's validating webhooks (HealthInterpreters,
	// ResourceInterpreterCustomizations, credentials Secrets).
	webhook *webhookserver.Server
	// controllersCfg is the controller manager's: its ServiceAccount's
	// token. The manager runs with ctrlOpts under ctrlCtx, logging to
	// ctrlLog; controllers is the one running (nil while stopped, see
	// controllers.go), and controllersLost receives why one stopped that
	// StopControllers did not stop.
	controllersCfg  *rest.Config
	ctrlOpts        controllermanager.Options
	ctrlCtx         context.Context
	ctrlLog         logr.Logger
	controllers     *runningControllers
	controllersLost chan error

	// agents run the Pull members' agents, by member name.
	agents   map[string]*runningAgent
	agentCtx context.Context
	agentLog logr.Logger

	// hubOpts and hubCtx start the hub (again, after RestartHub);
	// hubLost is closed when it stops on its own; hubRestarting is set
	// while RestartHub runs (under mu).
	hubOpts       controlplane.Options
	hubCtx        context.Context
	hubLost       chan struct{}
	hubRestarting bool

	cancel       context.CancelFunc
	stopClusters context.CancelFunc
	done         chan struct{}
	mu           sync.Mutex
	err          error
}

// MemberKubeconfigPath is where member name's kubeconfig is written.
func MemberKubeconfigPath(dataDir, name string) string {
	return filepath.Join(dataDir, "members", name+".kubeconfig")
}

// Start starts the hub, the members (in parallel), joins the members to the
// hub and starts the controller manager. Cancelling ctx stops everything.
//
// The webhooks come first: the hub's right after the hub, each member's pod
// rescheduler's right after the members, each on a new port with its
// url: configuration rewritten, and Start goes on only once each API
// server calls its webhook there. Started again on the same data dir
// (after a Ctrl-C or a kill -9 alike), the API servers hold the
// configurations the previous process wrote, naming its ports; the hub's
// refuse (failurePolicy Fail) what they cover, members' credentials
// Secrets among them, until then. So nothing is admitted unchecked, and
// nothing refused, once Start returns.
//
// The hub runs API Priority and Fairness with config/flowcontrol's
// priority levels, and the controller manager runs as it does installed:
// under its ServiceAccount (config/rbac), with a token and nothing else,
// so its requests meet its RBAC and are classified by those FlowSchemas
// (an admin's are exempt from both).
//
// A fleet without members starts the hub and the controllers alone.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if len(opts.Fleet.Members) > 0 {
		if err := opts.Fleet.Validate(); err != nil {
			return nil, err
		}
	}
	crds, err := crd.Hub()
	if err != nil {
		return nil, err
	}
	if opts.RayOperator {
		crds = append(crds, simmember.RayClusterCRD())
	}
	// The clusters run under their own context, so that on shutdown the
	// controllers stop first, while the API servers they talk to are still
	// up, and the clusters after them.
	clusterCtx, stopClusters := context.WithCancel(context.WithoutCancel(ctx))
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{cancel: cancel, stopClusters: stopClusters, done: make(chan struct{}), hubLost: make(chan struct{}), hubCtx: clusterCtx,
		controllersLost: make(chan error, 1)}
	fail := func(err error) (*Fleet, error) {
		cancel()
		stopClusters()
		f.waitComponents()
		return nil, err
	}
	log := opts.Logger
	// Until Start returns, cancelling ctx aborts the clusters' start; after
	// that, supervise orders the shutdown.
	stopOnCancel := context.AfterFunc(ctx, stopClusters)
	defer stopOnCancel()
	// Every goroutine started below carries a "component" profiler label
	// (hub, member, controllers, pod-rescheduler), so a CPU profile of the
	// whole process splits by part: `go tool pprof -tagfocus component=hub`.
	f.hubOpts = controlplane.Options{
		DataDir: opts.DataDir, CRDs: crds, Logger: log.WithName("hub"), APIServerPort: opts.HubPort,
		PriorityAndFairness: true, MaxRequestsInFlight: opts.HubMaxRequestsInFlight, EtcdVia: opts.HubEtcdVia,
	}
	if err := f.startHub(); err != nil {
		return fail(fmt.Errorf("starting the hub: %w", err))
	}
	hubCfg := f.Hub.RestConfig()
	if !opts.NoControllers {
		// Before anything they check is written: members' credentials
		// Secrets (joinMembers), then whatever users apply.
		labelled(ctx, "controllers", func(ctx context.Context) { f.webhook, err = startWebhook(ctx, hubCfg, log) })
		if err != nil {
			return fail(err)
		}
	}
	labelled(clusterCtx, "member", func(ctx context.Context) { f.Members, err = startMembers(ctx, opts) })
	if err != nil {
		return fail(err)
	}
	if !opts.NoControllers {
		// Before Shepherd creates workloads in the members.
		labelled(ctx, "pod-rescheduler", func(ctx context.Context) {
			f.podReschedulers, err = startPodReschedulers(ctx, f.Members, !opts.MembersAPIOnly, log)
		})
		if err != nil {
			return fail(err)
		}
	}
	if err := applyIdentity(ctx, hubCfg); err != nil {
		return fail(err)
	}
	pulls, err := joinMembers(ctx, hubCfg, opts, f.Members)
	if err != nil {
		return fail(err)
	}
	labelled(ctx, "agent", func(ctx context.Context) { f.startAgents(ctx, opts, pulls, log) })
	if !opts.NoControllers {
		f.controllersCfg, err = install.ServiceAccountConfig(ctx, hubCfg, controllersTokenTTL)
		if err != nil {
			return fail(err)
		}
		f.ctrlOpts, f.ctrlCtx, f.ctrlLog = opts.Controllers, ctx, log
		if err := f.startControllers(); err != nil {
			return fail(err)
		}
	}
	go f.supervise(ctx)
	return f, nil
}

// labelled runs fn with the profiler label component=name, which the
// goroutines fn starts inherit.
func labelled(ctx context.Context, name string, fn func(context.Context)) {
	pprof.Do(ctx, pprof.Labels("component", name), fn)
}

func startMembers(ctx context.Context, opts Options) ([]*simmember.Member, error) {
	members := make([]*simmember.Member, len(opts.Fleet.Members))
	g, gctx := errgroup.WithContext(ctx)
	for i, spec := range opts.Fleet.Members {
		g.Go(func() error {
			dir := filepath.Join(opts.DataDir, "members", spec.Name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			m, err := simmember.Start(ctx, simmember.Options{
				MemberSpec:     spec,
				APIOnly:        opts.MembersAPIOnly,
				KwokStages:     opts.KwokStages,
				RayOperator:    opts.RayOperator,
				DataDir:        dir,
				KubeconfigPath: MemberKubeconfigPath(opts.DataDir, spec.Name),
				Logger:         opts.Logger.WithName("member").WithValues("member", spec.Name),
				// Node-level pod rescheduling: the kube-scheduler plugin that
				// keeps a failing pod off the nodes it already failed on.
				SchedulerPlugins: map[string]simmember.SchedulerPluginFactory{schedplugin.Name: schedplugin.New},
			})
			if err != nil {
				return fmt.Errorf("starting member %s: %w", spec.Name, err)
			}
			members[i] = m
			return gctx.Err()
		})
	}
	err := g.Wait()
	return members, err
}

// joinMembers joins each member the way `shepherd join` does, or, for Pull
// members, registers it the way `shepherd register` does and returns the
// agents' hub configurations by member name.
func joinMembers(ctx context.Context, hubCfg *rest.Config, opts Options, members []*simmember.Member) (map[string]*rest.Config, error) {
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	pulls := map[string]*rest.Config{}
	for i, m := range members {
		spec := opts.Fleet.Members[i]
		if spec.Pull {
			cfg, err := registerPull(ctx, hubCfg, hub, opts.DataDir, spec, m)
			if err != nil {
				return nil, fmt.Errorf("registering Pull member %s: %w", spec.Name, err)
			}
			pulls[spec.Name] = cfg
			continue
		}
		_, err := membership.Join(ctx, hub, membership.JoinOptions{
			Name:           spec.Name,
			KubeconfigPath: m.KubeconfigPath(),
			Provider:       spec.Provider,
			Region:         spec.Region,
			Zone:           spec.Zone,
			Labels:         spec.Labels,
			// A local fleet is for trying policies out, operators'
			// install manifests (cluster RBAC) included: the hub may
			// propagate RBAC objects (Pull members' in-process agents use
			// the member's admin credentials and may already).
			AllowRBACPropagation: true,
		})
		if err != nil {
			return nil, fmt.Errorf("joining member %s: %w", spec.Name, err)
		}
	}
	return pulls, nil
}

// controllersTokenTTL is how long the controller manager's token is
// valid: as long as an agent's (membership.DefaultAgentTokenTTL); every
// start issues a new one.
const controllersTokenTTL = membership.DefaultAgentTokenTTL

// applyIdentity applies, as the admin, the controller manager's
// namespace, ServiceAccount and RBAC and the priority levels of the hub's
// pipeline (install.IdentityManifests), so that `shepherd up
// --no-controllers` users can run `shepherd controller-manager` as it runs
// installed too.
func applyIdentity(ctx context.Context, hubCfg *rest.Config) error {
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if err := install.ApplyIdentity(ctx, hub); err != nil {
		return fmt.Errorf("applying the controller manager's identity and priority levels: %w", err)
	}
	return nil
}

// startWebhook serves the hub's validating webhooks (HealthInterpreters,
// ResourceInterpreterCustomizations, members' credentials Secrets) on
// loopback, points the hub's configuration at them and returns once the
// hub calls them.
func startWebhook(ctx context.Context, hubCfg *rest.Config, log logr.Logger) (*webhookserver.Server, error) {
	c, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	s, err := admission.ServeWebhook(ctx, c, admission.WebhookOptions{URLConfiguration: true}, log.WithName("webhook"))
	if err != nil {
		return nil, fmt.Errorf("starting the hub's validating webhooks: %w", err)
	}
	// The configuration holds all three webhooks: once the hub calls one
	// at this address, it calls them all there.
	err = s.AwaitCalls(ctx, webhookAwaitTimeout, func(ctx context.Context) error {
		return c.Create(ctx, &configv1alpha1.HealthInterpreter{
			ObjectMeta: metav1.ObjectMeta{Name: webhookProbeName},
			Spec: configv1alpha1.HealthInterpreterSpec{
				Target: configv1alpha1.HealthTarget{APIVersion: "probe.shepherd.io/v1", Kind: "Probe"},
				Health: configv1alpha1.HealthExpression{Expression: "true"},
			},
		}, client.DryRunAll)
	})
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("the hub does not call its validating webhooks: %w", err)
	}
	return s, nil
}

// webhookProbeName names the objects that startWebhook and
// startPodReschedulers create in dry runs to see their webhooks called.
const webhookProbeName = "shepherd-webhook-probe"

// webhookAwaitTimeout bounds how long an API server may take to call a
// webhook whose configuration was just written: it watches the
// configurations, so it takes well under a second unless two busy cores
// starve it.
const webhookAwaitTimeout = time.Minute

// startPodReschedulers runs, for every member, the controller that
// recreates pods failing on a node and the webhook that tells the new pod
// which nodes to avoid (docs/pod-rescheduling.md), and, with await,
// returns once each member calls its webhook. (Members that run their API
// server only create no pods, and would refuse the probe's: they have no
// ServiceAccount.)
func startPodReschedulers(ctx context.Context, members []*simmember.Member, await bool, log logr.Logger) ([]*podrescheduler.Rescheduler, error) {
	out := make([]*podrescheduler.Rescheduler, 0, len(members))
	for _, m := range members {
		r, err := podrescheduler.Start(ctx, m.RestConfig(), podrescheduler.Options{
			Webhook: webhook.Options{URLConfiguration: true},
			Logger:  log.WithName("pod-rescheduler").WithValues("member", m.Name()),
		})
		if err != nil {
			return out, fmt.Errorf("starting the pod rescheduler of member %s: %w", m.Name(), err)
		}
		out = append(out, r)
		if !await {
			continue
		}
		if err := awaitPodWebhook(ctx, m.RestConfig(), r.Webhook); err != nil {
			return out, fmt.Errorf("member %s does not call its pod rescheduler webhook: %w", m.Name(), err)
		}
	}
	return out, nil
}

// awaitPodWebhook returns once the member of cfg calls s: its failurePolicy
// Ignore admits pods unchanged while the member still calls the address
// the configuration named before.
func awaitPodWebhook(ctx context.Context, cfg *rest.Config, s *webhookserver.Server) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	return s.AwaitCalls(ctx, webhookAwaitTimeout, func(ctx context.Context) error {
		// Only pods a ReplicaSet, StatefulSet or Job controls are sent to
		// the webhook.
		return c.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: webhookProbeName, Namespace: metav1.NamespaceDefault,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: webhookProbeName, UID: webhookProbeName,
					Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
		}, client.DryRunAll)
	})
}

// supervise stops the whole fleet when any part fails or the caller's
// context ends, and records why: the controllers first, then the clusters.
func (f *Fleet) supervise(ctx context.Context) {
	defer close(f.done)
	select {
	case <-ctx.Done():
	case <-f.hubLost:
		f.setErr(errors.New("the hub stopped unexpectedly"))
	case err := <-f.controllersLost:
		if err != nil {
			f.setErr(fmt.Errorf("the controller manager stopped: %w", err))
		}
	}
	f.cancel()
	if err := f.waitControllers(); err != nil && !errors.Is(err, context.Canceled) {
		f.setErr(fmt.Errorf("the controller manager: %w", err))
	}
	for _, r := range f.podReschedulers {
		_ = r.Wait()
	}
	f.waitAgents()
	if f.webhook != nil {
		<-f.webhook.Done()
	}
	f.stopClusters()
	f.waitComponents()
}

func (f *Fleet) waitComponents() {
	var wg sync.WaitGroup
	for _, m := range f.Members {
		if m == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Wait(); err != nil && !errors.Is(err, context.Canceled) {
				f.setErr(fmt.Errorf("member %s: %w", m.Name(), err))
			}
		}()
	}
	wg.Wait()
	if hub := f.hub(); hub != nil {
		if err := hub.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			f.setErr(fmt.Errorf("hub: %w", err))
		}
	}
}

func (f *Fleet) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// Done is closed when every component has stopped.
func (f *Fleet) Done() <-chan struct{} { return f.done }

// Wait blocks until every component stopped and returns the first failure.
func (f *Fleet) Wait() error {
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Stop stops the fleet and waits for it.
func (f *Fleet) Stop() error {
	f.cancel()
	return f.Wait()
}

// Member returns the member named name, or nil.
func (f *Fleet) Member(name string) *simmember.Member {
	for _, m := range f.Members {
		if m.Name() == name {
			return m
		}
	}
	return nil
}
