package simmember

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
	"github.com/shepherd-io/shepherd/internal/dev/simmetrics"
)

const (
	readyPollInterval = 100 * time.Millisecond
	// componentStopTimeout bounds how long Stop waits for controllers,
	// scheduler and kwok before stopping the control plane under them; the
	// whole stop must fit in `shepherd up`'s 5 s.
	componentStopTimeout = 2 * time.Second
	// upstreamDemotion is how many verbosity levels the info logs of the
	// upstream components are pushed down, as logging.RedirectKlog
	// does for kube-apiserver: they log every controller start and cache
	// sync at V(0).
	upstreamDemotion = 2
)

// errStopped is the cancellation cause recorded by Stop.
var errStopped = errors.New("member stopped")

// Member is a running simulated member cluster. It stops when the context
// given to Start is cancelled or Stop is called; Done/Wait report when
// shutdown has finished.
type Member struct {
	name           string
	log            logr.Logger
	upstreamLog    logr.Logger
	kubeconfigPath string

	// cpMu guards cp, cpOpts and restarting: RestartControlPlane replaces
	// the control plane while the components keep running.
	cpMu       sync.Mutex
	cp         *controlplane.ControlPlane
	cpOpts     controlplane.Options
	cpCtx      context.Context
	restarting bool
	// cpLost is closed when a control plane exits that no restart stopped.
	cpLost chan struct{}

	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error // written once before done is closed
	once   sync.Once
}

// Start runs one member cluster in this process: an embedded etcd and
// kube-apiserver (controlplane.Start on opts.DataDir), the workload
// controllers of kube-controller-manager, a kube-scheduler and kwok
// simulating opts.Nodes nodes. It returns once all nodes are Ready and the
// "default" ServiceAccount exists, i.e. when pods can be created and will
// be scheduled and started; opts.KubeconfigPath has been written by then.
//
// If Start fails, everything it started has been stopped before it
// returns. Starting again with the same DataDir brings the member back with
// all its objects. Several members (and a hub) can run in one process; see
// the package documentation for the process-global state they share.
func Start(ctx context.Context, opts Options) (*Member, error) {
	opts, err := opts.complete()
	if err != nil {
		return nil, err
	}
	log := opts.Logger.WithValues("member", opts.Name)
	begin := time.Now()

	// The control plane must outlive the components that talk to it, so
	// once started it does not stop with ctx directly: supervise stops it
	// after them. Until then, ctx aborts its start.
	cpCtx, abortCP := context.WithCancel(context.WithoutCancel(ctx))
	stopAbort := context.AfterFunc(ctx, abortCP)
	cpOpts := controlplane.Options{
		DataDir:      opts.DataDir,
		Logger:       log.WithName("controlplane"),
		StartTimeout: opts.StartTimeout,
	}
	if opts.RayOperator {
		// Installed with the control plane, as an operator's CRDs come
		// before it: the controllers, the garbage collector among them,
		// find the kind served when they start.
		cpOpts.CRDs = []*apiextensionsv1.CustomResourceDefinition{RayClusterCRD()}
	}
	cp, err := controlplane.Start(cpCtx, cpOpts)
	stopAbort()
	if err != nil {
		return nil, fmt.Errorf("starting control plane of member %s: %w", opts.Name, err)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	m := &Member{
		name:           opts.Name,
		log:            log,
		upstreamLog:    log.V(upstreamDemotion),
		cp:             cp,
		cpOpts:         cpOpts,
		cpCtx:          cpCtx,
		cpLost:         make(chan struct{}),
		kubeconfigPath: opts.KubeconfigPath,
		cancel:         cancel,
		done:           make(chan struct{}),
	}
	group := new(sync.WaitGroup)
	timeout := time.AfterFunc(opts.StartTimeout-time.Since(begin), func() {
		cancel(fmt.Errorf("member did not start within %s", opts.StartTimeout))
	})
	err = m.start(runCtx, opts, group)
	timeout.Stop()
	if err != nil {
		if cause := context.Cause(runCtx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		cancel(err)
		go m.supervise(runCtx, group)
		<-m.done
		return nil, fmt.Errorf("starting member %s: %w", opts.Name, err)
	}
	go m.supervise(runCtx, group)
	log.Info("member ready", "url", m.URL(), "kubeconfig", m.kubeconfigPath, "nodes", opts.Nodes,
		"elapsed", time.Since(begin).Round(time.Millisecond))
	return m, nil
}

// start brings up everything on top of the control plane. Components run
// on group until ctx ends.
func (m *Member) start(ctx context.Context, opts Options, group *sync.WaitGroup) error {
	m.watchControlPlane(m.controlPlane())
	if err := writeKubeconfig(m.kubeconfigPath, m.name, m.controlPlane().RestConfig()); err != nil {
		return err
	}
	client := m.client("shepherd-member")
	if err := ensureNodes(ctx, client, opts.MemberSpec); err != nil {
		return err
	}
	// The metrics API first: the API server checks and routes to it while
	// the scheduler and kwok start. The controllers come once it is
	// Available: the namespace and garbage-collector controllers discover
	// every API at start and log an error for one registered but not
	// Available yet.
	var metrics *simmetrics.Server
	if !opts.APIOnly {
		var err error
		if metrics, err = m.startMetrics(ctx, group); err != nil {
			return err
		}
		if err := m.startScheduler(ctx, group, opts.SchedulerPlugins); err != nil {
			return err
		}
	}
	if err := m.startKwok(ctx, opts.KwokStages); err != nil {
		return err
	}
	if metrics != nil {
		if err := metrics.WaitAvailable(ctx); err != nil {
			return err
		}
		if err := m.startControllers(ctx, group, opts.RayOperator); err != nil {
			return err
		}
	}
	return waitReady(ctx, client, opts.MemberSpec, !opts.APIOnly)
}

// waitReady waits until kwok has made every node Ready and, with
// controllers, the serviceaccount controller has created the default
// namespace's "default" ServiceAccount, without which pods there are
// rejected at admission.
func waitReady(ctx context.Context, client kubernetes.Interface, spec MemberSpec, controllers bool) error {
	var notReady string
	err := wait.PollUntilContextCancel(ctx, readyPollInterval, true, func(ctx context.Context) (bool, error) {
		for i := range spec.Nodes {
			node, err := client.CoreV1().Nodes().Get(ctx, NodeName(spec.Name, i), metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				notReady = "node " + NodeName(spec.Name, i)
				return false, nil
			}
		}
		if !controllers {
			return true, nil
		}
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			notReady = "default ServiceAccount"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to become ready: %w", notReady, err)
	}
	return nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// supervise stops the member when ctx ends or its control plane dies:
// components first, bounded by componentStopTimeout, then the control plane,
// so the components never lose their apiserver while still running.
func (m *Member) supervise(ctx context.Context, group *sync.WaitGroup) {
	var failure error
	select {
	case <-ctx.Done():
	case <-m.cpLost:
		failure = fmt.Errorf("control plane exited: %w", m.controlPlane().Wait())
		m.cancel(failure)
	}
	begin := time.Now()
	stopped := make(chan struct{})
	go func() {
		group.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(componentStopTimeout):
		m.log.Info("components did not stop in time; stopping the control plane under them",
			"timeout", componentStopTimeout)
	}
	componentsStopped := time.Since(begin)
	if err := m.controlPlane().Stop(); err != nil && failure == nil {
		failure = fmt.Errorf("stopping control plane: %w", err)
	}
	m.log.Info("member stopped", "elapsed", time.Since(begin).Round(time.Millisecond),
		"components", componentsStopped.Round(time.Millisecond))
	m.err = failure
	close(m.done)
}

// clientConfig returns a copy of the admin config identifying itself as
// component, so that the member's apiserver logs and audit tell the
// components apart.
func (m *Member) clientConfig(component string) *rest.Config {
	cfg := m.controlPlane().RestConfig()
	return rest.AddUserAgent(cfg, "shepherd-member/"+component)
}

// client returns a clientset for component with its own rate limiter, as
// kube-controller-manager gives each controller. Building it cannot fail:
// the config is the admin config the control plane has already used
// successfully for its readiness checks, so a failure is a programming
// error, hence OrDie rather than an error path at every call site.
//
// It speaks protobuf, as kube-controller-manager and kube-scheduler do by
// default (--kube-api-content-type): JSON would cost the member's API
// server and its controllers several times the CPU for every pod,
// ReplicaSet and event, in one process shared by every member.
func (m *Member) client(component string) kubernetes.Interface {
	cfg := m.clientConfig(component)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return kubernetes.NewForConfigOrDie(cfg)
}

// Name is the member's name.
func (m *Member) Name() string { return m.name }

// RestConfig returns a copy of the member's admin client config (client
// certificate in group system:masters). Callers may modify the copy.
func (m *Member) RestConfig() *rest.Config { return m.controlPlane().RestConfig() }

// KubeconfigPath is where the member's kubeconfig was written, with
// cluster, user and context named after the member.
func (m *Member) KubeconfigPath() string { return m.kubeconfigPath }

// URL is the member apiserver's https URL.
func (m *Member) URL() string { return m.controlPlane().URL() }

// controlPlane is the running control plane (the one RestartControlPlane
// started last).
func (m *Member) controlPlane() *controlplane.ControlPlane {
	m.cpMu.Lock()
	defer m.cpMu.Unlock()
	return m.cp
}

// watchControlPlane closes cpLost when cp exits while no restart stopped
// it: supervise then stops the member.
func (m *Member) watchControlPlane(cp *controlplane.ControlPlane) {
	go func() {
		<-cp.Done()
		m.cpMu.Lock()
		defer m.cpMu.Unlock()
		if m.cp == cp && !m.restarting {
			select {
			case <-m.cpLost:
			default:
				close(m.cpLost)
			}
		}
	}()
}

// RestartControlPlane stops the member's API server and etcd, leaves them
// down for down, and starts them again on the same data directory and
// port, as a restart of a member's control plane does: every stored object
// stays, every request and watch open meanwhile fails, and every client
// (the member's own controllers, kwok, Shepherd) finds it again at the
// same address with the same certificates.
func (m *Member) RestartControlPlane(down time.Duration) error {
	m.cpMu.Lock()
	if m.restarting {
		m.cpMu.Unlock()
		return errors.New("the member's control plane is already restarting")
	}
	m.restarting = true
	old, opts := m.cp, m.cpOpts
	m.cpMu.Unlock()
	defer func() {
		m.cpMu.Lock()
		m.restarting = false
		m.cpMu.Unlock()
	}()
	u, err := url.Parse(old.URL())
	if err != nil {
		return err
	}
	if opts.APIServerPort, err = strconv.Atoi(u.Port()); err != nil {
		return fmt.Errorf("the port in %s: %w", old.URL(), err)
	}
	if err := old.Stop(); err != nil {
		return fmt.Errorf("stopping member %s's control plane: %w", m.name, err)
	}
	time.Sleep(down)
	cp, err := controlplane.Start(m.cpCtx, opts)
	if err != nil {
		err = fmt.Errorf("starting member %s's control plane again: %w", m.name, err)
		m.cancel(err)
		return err
	}
	m.cpMu.Lock()
	m.cp, m.cpOpts = cp, opts
	m.cpMu.Unlock()
	m.watchControlPlane(cp)
	return nil
}

// Done is closed once everything the member ran has shut down.
func (m *Member) Done() <-chan struct{} { return m.done }

// Wait blocks until shutdown has finished. It returns nil after a requested
// stop (Stop or context cancellation) and the failure otherwise, e.g. when
// the member's etcd died.
func (m *Member) Wait() error {
	<-m.done
	return m.err
}

// Stop initiates shutdown and waits for it; it is safe to call repeatedly
// and concurrently with cancellation of the Start context.
func (m *Member) Stop() error {
	m.once.Do(func() { m.cancel(errStopped) })
	return m.Wait()
}
