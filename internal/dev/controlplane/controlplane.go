package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// ControlPlane is a running etcd + kube-apiserver pair. It stops when the
// context given to Start is cancelled or Stop is called; Done/Wait report
// when shutdown has finished.
type ControlPlane struct {
	log             logr.Logger
	restConfig      *rest.Config
	kubeconfigPath  string
	shutdownTimeout time.Duration
	lock            *dirLock
	// listener is the apiserver's: released by shutdown itself when the
	// apiserver does not stop in time, so that the port is free for a
	// restart in place once Stop returns.
	listener *releasableListener
	// etcd is read for its storage size (StorageBytes).
	etcd *etcdServer

	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error // written once before done is closed
	once   sync.Once
}

// errStopped is the cancellation cause recorded by Stop, distinguishing an
// explicit stop from the parent context ending.
var errStopped = errors.New("control plane stopped")

// Start brings up etcd and kube-apiserver in this process, waits until the
// apiserver is ready, writes DataDir/kubeconfig and installs opts.CRDs.
//
// The control plane lives until ctx is cancelled or Stop is called. If Start
// fails, everything it started has been shut down before it returns.
//
// Starting again with the same DataDir (sequentially, in this or another
// process) keeps all stored objects and certificates; ports may change, and
// the kubeconfig is rewritten accordingly. A DataDir in use by another
// running control plane is refused. See the package doc for the
// process-global state kube-apiserver brings along.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	opts, err := opts.complete()
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	begin := time.Now()
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	lock, err := lockDir(opts.lockPath())
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", opts.DataDir, err)
	}
	cp, err := start(ctx, opts, lock)
	if err != nil {
		return nil, err
	}
	log.Info("control plane ready", "url", cp.URL(), "kubeconfig", cp.kubeconfigPath,
		"crds", len(opts.CRDs), "elapsed", time.Since(begin).Round(time.Millisecond))
	return cp, nil
}

// start does the work of Start once the data dir is locked. On failure it
// releases the lock after etcd has let go of the data dir.
func start(ctx context.Context, opts Options, lock *dirLock) (*ControlPlane, error) {
	log := opts.Logger

	dnsNames, ips := servingSANs(opts)
	p, err := ensurePKI(log.WithName("pki"), opts.pkiDir(), dnsNames, ips)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("preparing certificates in %s: %w", opts.pkiDir(), err)
	}

	// runCtx owns both components; cancelling it is the one way to stop them.
	runCtx, cancel := context.WithCancelCause(ctx)
	startCtx, startCancel := context.WithTimeoutCause(runCtx, opts.StartTimeout,
		fmt.Errorf("control plane did not start within %s", opts.StartTimeout))
	defer startCancel()

	etcd, err := startEtcd(startCtx, log.WithName("etcd"), opts.etcdDir(), opts.EtcdClientPort, opts.EtcdPeerPort)
	if err != nil {
		cancel(err)
		lock.release()
		return nil, err
	}

	socket, err := listenAPIServer(opts.BindAddress, opts.APIServerPort)
	if err != nil {
		cancel(err)
		releaseAfter(etcd.stop(), lock)
		return nil, fmt.Errorf("listening for kube-apiserver on %s: %w", opts.BindAddress, err)
	}
	ln := newReleasableListener(socket)
	port := ln.Addr().(*net.TCPAddr).Port
	serverURL := "https://" + net.JoinHostPort(opts.clientHost(), strconv.Itoa(port))

	cp := &ControlPlane{
		log:             log,
		restConfig:      adminRestConfig(serverURL, p),
		kubeconfigPath:  opts.kubeconfigPath(),
		shutdownTimeout: opts.ShutdownTimeout,
		lock:            lock,
		listener:        ln,
		etcd:            etcd,
		cancel:          cancel,
		done:            make(chan struct{}),
	}

	etcdURL := etcd.clientURL
	if opts.EtcdVia != nil {
		if etcdURL, err = via(etcdURL, opts.EtcdVia); err != nil {
			ln.Close()
			cancel(err)
			releaseAfter(etcd.stop(), lock)
			return nil, err
		}
	}
	apiErr, err := startAPIServer(runCtx, log, apiserverParams{listener: ln, advertise: net.ParseIP(opts.clientHost()), etcdURL: etcdURL, pki: p, priorityAndFairness: opts.PriorityAndFairness, maxRequestsInFlight: opts.MaxRequestsInFlight})
	if err != nil {
		ln.Close()
		cancel(err)
		releaseAfter(etcd.stop(), lock)
		return nil, err
	}
	go cp.supervise(runCtx, etcd, apiErr)

	if err := cp.finishStart(startCtx, opts); err != nil {
		cp.cancel(err)
		<-cp.done
		return nil, err
	}
	return cp, nil
}

func startAPIServer(ctx context.Context, log logr.Logger, p apiserverParams) (<-chan error, error) {
	completed, err := newAPIServerOptions(ctx, p)
	if err != nil {
		return nil, err
	}
	return runAPIServer(ctx, log.WithName("apiserver"), completed)
}

// finishStart waits for readiness, then writes the kubeconfig and installs
// CRDs. The kubeconfig is written only once the server answers so that a
// stale file never points at a half-started apiserver.
func (c *ControlPlane) finishStart(ctx context.Context, opts Options) error {
	// Abort the wait as soon as the control plane dies during startup.
	waitCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-c.done:
			cancel(fmt.Errorf("control plane exited during startup: %w", c.err))
		case <-waitCtx.Done():
		}
	}()
	if err := waitReady(waitCtx, c.restConfig); err != nil {
		return err
	}
	if err := writeKubeconfig(c.kubeconfigPath, c.restConfig); err != nil {
		return err
	}
	return InstallCRDs(waitCtx, opts.Logger.WithName("crds"), c.restConfig, opts.CRDs)
}

// supervise ties the two components' lifetimes together: whichever ends
// first (context, apiserver error, etcd error) brings the other down, in the
// order apiserver then etcd, so the apiserver never loses its storage while
// still serving.
func (c *ControlPlane) supervise(ctx context.Context, etcd *etcdServer, apiErr <-chan error) {
	var runErr error
	apiDone := false
	select {
	case <-ctx.Done():
	case err := <-apiErr:
		apiDone = true
		runErr = err
		if runErr == nil {
			runErr = errors.New("kube-apiserver exited unexpectedly")
		}
	case err := <-etcd.Err():
		if err == nil {
			err = errors.New("stopped serving")
		}
		runErr = fmt.Errorf("embedded etcd failed: %w", err)
	}
	c.cancel(runErr)

	begin := time.Now()
	if !apiDone {
		select {
		case err := <-apiErr:
			if runErr == nil && err != nil {
				runErr = err
			}
		case <-time.After(c.shutdownTimeout):
			// Usually a long-lived request holding the HTTP server open.
			// Closing etcd makes the apiserver fail fast and exit.
			// Its port is released too (see releasableListener): a
			// restart in place on the same port would otherwise find it
			// taken ("address already in use") while the apiserver winds
			// down.
			c.log.Info("kube-apiserver did not stop in time; releasing its port and closing etcd under it", "timeout", c.shutdownTimeout)
			_ = c.listener.release()
		}
	}
	apiStopped := time.Since(begin)
	releaseAfter(etcd.stop(), c.lock)
	c.log.Info("control plane stopped", "elapsed", time.Since(begin).Round(time.Millisecond),
		"apiserver", apiStopped.Round(time.Millisecond))
	c.err = runErr
	close(c.done)
}

// RestConfig returns a copy of the admin client config (client certificate
// in group system:masters). Callers may modify the copy freely.
func (c *ControlPlane) RestConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// KubeconfigPath is DataDir/kubeconfig, with cluster, user and context all
// named KubeconfigName.
func (c *ControlPlane) KubeconfigPath() string { return c.kubeconfigPath }

// URL is the apiserver's https URL.
func (c *ControlPlane) URL() string { return c.restConfig.Host }

// StorageBytes is the size of etcd's database: the file as allocated
// (what etcd_mvcc_db_total_size_in_bytes reports) and the part of it in
// use. Both hold every revision etcd keeps until the API server compacts
// it (every five minutes), not only the objects' latest versions. Read
// from the server in this process: the API servers of a local fleet share
// one metrics registry, whose storage size is the last one's to start.
func (c *ControlPlane) StorageBytes() (allocated, inUse int64) {
	b := c.etcd.Server.Backend()
	return b.Size(), b.SizeInUse()
}

// Done is closed once the apiserver and etcd have both shut down.
func (c *ControlPlane) Done() <-chan struct{} { return c.done }

// Wait blocks until shutdown has finished. It returns nil after a requested
// stop (Stop or context cancellation) and the failure otherwise, e.g. when
// etcd died underneath the apiserver.
func (c *ControlPlane) Wait() error {
	<-c.done
	return c.err
}

// Stop initiates shutdown and waits for it; it is safe to call repeatedly
// and concurrently with cancellation of the Start context.
func (c *ControlPlane) Stop() error {
	c.once.Do(func() { c.cancel(errStopped) })
	return c.Wait()
}

// releaseAfter releases lock once etcd has closed: immediately if it
// already has (so a sequential restart finds the dir free), otherwise in
// the background.
func releaseAfter(etcdClosed <-chan struct{}, lock *dirLock) {
	select {
	case <-etcdClosed:
		lock.release()
	default:
		go func() {
			<-etcdClosed
			lock.release()
		}()
	}
}

// servingSANs lists the names and IPs the serving certificate must cover.
func servingSANs(opts Options) ([]string, []net.IP) {
	dns := append([]string(nil), apiserverDNSNames...)
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), firstServiceIP()}
	if ip := opts.bindIP(); !ip.IsUnspecified() {
		ips = append(ips, ip)
	} else if host, err := os.Hostname(); err == nil && host != "" {
		// Listening on all interfaces: the host name is the likeliest
		// name remote clients use; others go in Options.ExtraSANs.
		dns = append(dns, host)
	}
	for _, san := range opts.ExtraSANs {
		if ip := net.ParseIP(san); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, san)
		}
	}
	return dns, ips
}

// firstServiceIP is the ClusterIP of the "kubernetes" Service in
// serviceCIDR, which in-cluster clients would dial.
func firstServiceIP() net.IP {
	_, n, _ := net.ParseCIDR(serviceCIDR)
	ip := n.IP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1)
}

// via is etcd's client URL with its address replaced by what route returns
// for it (Options.EtcdVia).
func via(etcdURL string, route func(string) (string, error)) (string, error) {
	u, err := url.Parse(etcdURL)
	if err != nil {
		return "", err
	}
	addr, err := route(u.Host)
	if err != nil {
		return "", fmt.Errorf("routing the API server to etcd at %s: %w", u.Host, err)
	}
	u.Host = addr
	return u.String(), nil
}
