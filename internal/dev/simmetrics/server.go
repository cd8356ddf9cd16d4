package simmetrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

const (
	// shutdownTimeout bounds how long a stopping server waits for requests
	// in flight; a member's whole stop must fit in a few seconds.
	shutdownTimeout = time.Second
	// requestTimeout bounds the reads one metrics request makes from the
	// member's API server (the aggregator gives discovery 5 s).
	requestTimeout = 10 * time.Second
)

// Options configures a member's metrics server.
type Options struct {
	// Config reaches the member's API server as a user allowed to read
	// pods, nodes and ConfigMaps, write Events, and create the Service and
	// APIService (the member's admin). Required.
	Config *rest.Config
	// Logger receives the server's logs, e.g. ignored knob values.
	// Defaults to logr.Discard().
	Logger logr.Logger
	// Now is the clock of the reported timestamps; defaults to time.Now.
	Now func() time.Time
}

// resettableMapper maps resources to kinds, and forgets what it
// discovered when Reset.
type resettableMapper interface {
	meta.RESTMapper
	Reset()
}

// Server is a running metrics.k8s.io/v1beta1 and custom.metrics.k8s.io/v1beta2
// server for one member. It
// stops when the context given to Start ends; Done reports when it has.
type Server struct {
	log      logr.Logger
	kube     kubernetes.Interface
	agg      aggregator.Interface
	now      func() time.Time
	addr     *net.TCPAddr
	caBundle []byte
	trust    frontProxy
	reporter *reporter
	// mapper finds an Object metric's resource, meta reads its object.
	mapper resettableMapper
	meta   metadata.Interface
	done   chan struct{}
	// registered is when register returned, for WaitAvailable's log.
	registered time.Time
	// names is what custom.metrics.k8s.io discovery lists.
	names metricNames
}

// Start serves the member's metrics API on a free loopback port and
// registers it with the member's API server (the Service and APIService
// of Register), so that clients reach it through the member's API server
// at /apis/metrics.k8s.io/v1beta1. It returns once the server listens and
// is registered; WaitAvailable waits for the aggregator to route to it.
// The server stops when ctx ends.
//
// The member's API server must have front-proxy (requestheader)
// authentication configured: only requests the aggregator proxies, with
// its front-proxy client certificate, are served.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Config == nil {
		return nil, errors.New("simmetrics: Options.Config is required: the member API server's admin config")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	begin := time.Now()
	cfg := rest.CopyConfig(opts.Config)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("simmetrics: client for the member's API server: %w", err)
	}
	agg, err := aggregator.NewForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("simmetrics: apiregistration client for the member's API server: %w", err)
	}
	s := &Server{
		log:  opts.Logger,
		kube: kube,
		agg:  agg,
		now:  opts.Now,
		done: make(chan struct{}),
	}
	s.reporter = newReporter(kube, opts.Logger)
	s.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))
	if s.meta, err = metadata.NewForConfig(opts.Config); err != nil {
		return nil, fmt.Errorf("simmetrics: metadata client for the member's API server: %w", err)
	}
	if s.trust, err = readFrontProxy(ctx, kube); err != nil {
		return nil, err
	}
	cert, caBundle, err := servingCert()
	if err != nil {
		return nil, err
	}
	s.caBundle = caBundle
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("simmetrics: listening on loopback: %w", err)
	}
	s.addr = ln.Addr().(*net.TCPAddr)
	srv := &http.Server{
		Handler: s.handler(),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.VerifyClientCertIfGiven,
			ClientCAs:    s.trust.pool,
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          newServerErrorLog(opts.Logger),
	}
	go s.serve(ctx, srv, ln)
	if err := s.register(ctx); err != nil {
		_ = srv.Close()
		<-s.done
		return nil, err
	}
	s.log.V(1).Info("metrics API registered", "address", s.addr.String(), "elapsed", time.Since(begin).Round(time.Millisecond))
	return s, nil
}

// serve runs srv on ln until ctx ends, then shuts it down.
func (s *Server) serve(ctx context.Context, srv *http.Server, ln net.Listener) {
	defer close(s.done)
	errCh := make(chan error, 1)
	go func() { errCh <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errCh:
		if !errors.Is(err, http.ErrServerClosed) {
			s.log.Error(err, "metrics API server failed")
		}
		return
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-errCh; err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error(err, "metrics API server failed while shutting down")
	}
}

// Addr is the loopback address the server listens on.
func (s *Server) Addr() string { return s.addr.String() }

// Done is closed once the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }
