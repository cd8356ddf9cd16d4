package controlplane

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

const (
	// serviceCIDR only matters for the "kubernetes" Service the apiserver
	// creates; the hub runs no pods. Setting it explicitly avoids a
	// deprecation warning about the implicit default.
	serviceCIDR = "10.96.0.0/16"
	// serviceAccountIssuer is the conventional in-cluster issuer.
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	// watchTerminationGracePeriod bounds how long shutdown waits for
	// watches to return after being told to stop (they return immediately).
	watchTerminationGracePeriod = time.Second
)

// apiserverDNSNames are the serving-cert SANs clients may legitimately use.
var apiserverDNSNames = []string{
	"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// apiserverParams is what the kube-apiserver needs from the rest of Start.
type apiserverParams struct {
	listener  net.Listener
	advertise net.IP
	etcdURL   string
	pki       *pki
	// priorityAndFairness is Options.PriorityAndFairness.
	priorityAndFairness bool
	// maxRequestsInFlight is Options.MaxRequestsInFlight.
	maxRequestsInFlight int
}

// newAPIServerOptions fills kube-apiserver's options the way flags would,
// then completes and validates them. It never parses os.Args and never
// touches klog configuration.
func newAPIServerOptions(ctx context.Context, p apiserverParams) (options.CompletedOptions, error) {
	s := options.NewServerRunOptions()

	// NewServerRunOptions registers the default feature gate in the
	// process-wide ComponentGlobalsRegistry (once). Set() resolves emulation
	// versions; with no --feature-gates/--emulated-version input it is
	// idempotent, so calling it on every (re)start is safe. Without it the
	// apiserver calls SetFallback and logs a warning.
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return options.CompletedOptions{}, fmt.Errorf("setting component globals: %w", err)
	}

	// Serving: hand over an already-bound listener so there is no race for
	// the port, with our persisted serving certificate.
	tcp := p.listener.Addr().(*net.TCPAddr)
	s.SecureServing.Listener = p.listener
	s.SecureServing.BindAddress = tcp.IP
	s.SecureServing.BindPort = tcp.Port
	s.SecureServing.ServerCert.CertKey.CertFile = p.pki.ServingCert
	s.SecureServing.ServerCert.CertKey.KeyFile = p.pki.ServingKey
	// Explicit advertise address: the default would look up the host's
	// default route, which fails in network-less sandboxes.
	s.GenericServerRunOptions.AdvertiseAddress = p.advertise
	// No load balancer to drain from: shut down immediately on cancel.
	s.GenericServerRunOptions.ShutdownDelayDuration = 0
	// A positive grace period makes the apiserver end active watches when
	// shutdown starts. With the default (0) an open watch keeps the HTTP
	// server alive for up to the 60s request timeout, far beyond the 5s
	// `shepherd up` has to exit after SIGTERM.
	s.GenericServerRunOptions.ShutdownWatchTerminationGracePeriod = watchTerminationGracePeriod
	// Metrics options only mutate process-global metric settings (hidden
	// metrics, label allow-lists); with defaults they just log a bogus
	// "manifest file is empty" error on every start. nil is a no-op.
	s.Metrics = nil

	s.Etcd.StorageConfig.Transport.ServerList = []string{p.etcdURL}

	// AuthN: client certs from our CA (admin has O=system:masters), and
	// service-account tokens so member-cluster agents can be given scoped
	// credentials later.
	s.Authentication.ClientCert.ClientCA = p.pki.CACert
	s.Authentication.ServiceAccounts.Issuers = []string{serviceAccountIssuer}
	s.Authentication.ServiceAccounts.KeyFiles = []string{p.pki.SAKey}
	s.ServiceAccountSigningKeyFile = p.pki.SAKey
	// Aggregation: the aggregator proxies requests for an APIService with
	// a client certificate from the front-proxy CA, and names the user
	// it authenticated and authorized in the standard headers. Aggregated
	// API servers find the CA and the allowed name in the
	// kube-system/extension-apiserver-authentication ConfigMap.
	s.Authentication.RequestHeader.ClientCAFile = p.pki.FrontProxyCACert
	s.Authentication.RequestHeader.AllowedNames = []string{ProxyClientCommonName}
	s.Authentication.RequestHeader.UsernameHeaders = []string{"X-Remote-User"}
	s.Authentication.RequestHeader.GroupHeaders = []string{"X-Remote-Group"}
	s.Authentication.RequestHeader.ExtraHeaderPrefixes = []string{"X-Remote-Extra-"}
	s.ProxyClientCertFile = p.pki.ProxyClientCert
	s.ProxyClientKeyFile = p.pki.ProxyClientKey

	// AuthZ: RBAC rather than AlwaysAllow, because anonymous auth stays on
	// (health probes need it) and AlwaysAllow would then give every local
	// process full access. system:masters bypasses RBAC, so the admin
	// kubeconfig needs no bindings. The Node authorizer is left out: there
	// are no kubelets.
	s.Authorization.Modes = []string{"RBAC"}

	// Nothing on the hub talks to the "kubernetes" Service endpoints, and
	// the lease reconciler would try to publish a loopback IP (which
	// Endpoints validation rejects), logging errors forever.
	s.EndpointReconcilerType = "none"
	s.ServiceClusterIPRanges = serviceCIDR

	// Priority & fairness adds config objects and controllers that only
	// matter under contention from many clients; max-in-flight suffices
	// for members and test hubs, which start faster without it. A hub
	// asks for it (Options.PriorityAndFairness).
	s.Features.EnablePriorityAndFairness = p.priorityAndFairness
	if n := p.maxRequestsInFlight; n > 0 {
		s.GenericServerRunOptions.MaxMutatingRequestsInFlight = n / 3
		s.GenericServerRunOptions.MaxRequestsInFlight = n - n/3
	}
	s.Features.EnableProfiling = false

	completed, err := s.Complete(ctx)
	if err != nil {
		return options.CompletedOptions{}, fmt.Errorf("completing kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return options.CompletedOptions{}, fmt.Errorf("validating kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	return completed, nil
}

// runAPIServer builds the aggregator → kube-apiserver → apiextensions
// delegation chain (exactly what kube-apiserver's Run does) and runs it
// under ctx in a goroutine. The returned channel receives the server's exit
// error (nil on clean shutdown) and is then closed.
//
// We deliberately avoid app.NewAPIServerCommand: it installs a process-wide
// signal handler that cannot be undone and panics if set up twice.
func runAPIServer(ctx context.Context, log logr.Logger, completed options.CompletedOptions) (<-chan error, error) {
	config, err := app.NewConfig(completed)
	if err != nil {
		return nil, fmt.Errorf("building kube-apiserver config: %w", err)
	}
	cc, err := config.Complete()
	if err != nil {
		return nil, fmt.Errorf("completing kube-apiserver config: %w", err)
	}
	server, err := app.CreateServerChain(cc)
	if err != nil {
		return nil, fmt.Errorf("creating kube-apiserver server chain: %w", err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return nil, fmt.Errorf("preparing kube-apiserver: %w", err)
	}

	errCh := make(chan error, 1)
	go func() {
		defer close(errCh)
		log.V(1).Info("kube-apiserver running")
		err := prepared.Run(ctx)
		if err != nil {
			err = fmt.Errorf("kube-apiserver exited: %w", err)
		}
		errCh <- err
	}()
	return errCh, nil
}
