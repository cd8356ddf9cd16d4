// Package webhookserver serves admission webhooks over HTTPS with a
// self-managed certificate, and publishes that certificate's CA in the
// webhook configurations that call them.
//
// Each Start generates a CA and a serving certificate in memory, so there
// is no certificate to provision or rotate. A configuration reaches the
// server one of two ways:
//   - in-process, as in `shepherd up` (WriteURLConfiguration): the whole
//     configuration is written with a url: client config pointing at the
//     server on loopback, e.g. https://127.0.0.1:PORT/validate-...; each
//     start listens on a new port, so a stored configuration names a
//     port that is gone until it is rewritten, and AwaitCalls tells when
//     the API server calls the new one;
//   - in a cluster (PublishLive): the configuration is deployed with a
//     service: client config, and its caBundle is set to the CAs of the
//     live replicas, each of which keeps its CA in a Lease it renews.
//
// The pod rescheduler's mutating webhook (package podrescheduler/webhook)
// and the hub's validating webhooks (package admission) use it.
package webhookserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Route is a handler and the path it serves.
type Route struct {
	Path    string
	Handler http.Handler
}

// Options configure a server.
type Options struct {
	// Name is the serving certificate's common name (its CA's is Name-ca).
	Name string
	// BindAddress is the IP to listen on (default 127.0.0.1; 0.0.0.0 in a
	// pod).
	BindAddress string
	// Port to listen on; 0 picks a free one.
	Port int
	// DNSNames are extra names for the serving certificate, e.g. the
	// Service's "NAME.NAMESPACE.svc". The bind address, when it is a
	// specific IP, is always included.
	DNSNames []string
	// Routes are served in this order of registration.
	Routes []Route
	// ShutdownTimeout bounds how long Stop waits for requests in flight
	// (default 5 s).
	ShutdownTimeout time.Duration
	// Logger receives the server's logs (default: discard).
	Logger logr.Logger
}

// Server is a running webhook server.
type Server struct {
	base   string
	caPEM  []byte
	srv    *http.Server
	done   chan struct{}
	err    error // written before done is closed
	cancel context.CancelFunc
	// calls counts the requests served (see AwaitCalls).
	calls atomic.Int64
}

// Start listens and serves until ctx ends or Stop is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Name == "" {
		return nil, errors.New("webhookserver: Options.Name is required")
	}
	if opts.BindAddress == "" {
		opts.BindAddress = "127.0.0.1"
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 5 * time.Second
	}
	log := opts.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	ip := net.ParseIP(opts.BindAddress)
	if ip == nil {
		return nil, fmt.Errorf("webhook bind address %q is not an IP", opts.BindAddress)
	}
	var ips []net.IP
	if !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	certs, err := newSelfSigned(opts.Name, opts.DNSNames, ips, time.Now())
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for _, r := range opts.Routes {
		mux.Handle(r.Path, r.Handler)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("webhook: listening: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{
		base:   "https://" + net.JoinHostPort(opts.BindAddress, strconv.Itoa(port)),
		caPEM:  certs.caPEM,
		done:   make(chan struct{}),
		cancel: cancel,
	}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.calls.Add(1)
			mux.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{certs.cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: opts.ShutdownTimeout,
	}
	go s.serve(ctx, ln, opts.ShutdownTimeout, log)
	return s, nil
}

// serve runs the HTTPS server until ctx ends, then shuts it down.
func (s *Server) serve(ctx context.Context, ln net.Listener, timeout time.Duration, log logr.Logger) {
	errCh := make(chan error, 1)
	go func() { errCh <- s.srv.ServeTLS(ln, "", "") }()
	var err error
	select {
	case err = <-errCh:
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		err = s.srv.Shutdown(shutdownCtx)
		cancel()
		// Serve returns http.ErrServerClosed once Shutdown is called; any
		// other error of its counts when Shutdown itself went well.
		if serveErr := <-errCh; err == nil && !errors.Is(serveErr, http.ErrServerClosed) {
			err = serveErr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		log.Error(err, "webhook server stopped")
	}
	s.err = err
	close(s.done)
}

// URL is the address of path on this server, for a url: client config.
func (s *Server) URL(path string) string { return s.base + path }

// CABundle is the PEM CA certificate the serving certificate chains to.
func (s *Server) CABundle() []byte { return s.caPEM }

// AwaitCalls returns once an API server calls this server, sending probe
// (a request one of its webhooks matches, such as a dry-run create) until
// it does. A configuration just written reaches the API server's admission
// through a watch: until then it calls the configuration it had, on a
// restart the address and CA of the process that wrote it, which answer
// nothing (failurePolicy Fail refuses every request it matches). Only a
// configuration naming this server's address makes a call arrive here.
// probe's errors are expected meanwhile; the last one is returned when
// timeout passes first.
func (s *Server) AwaitCalls(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, awaitInterval, timeout, true, func(ctx context.Context) (bool, error) {
		before := s.calls.Load()
		last = probe(ctx)
		return s.calls.Load() > before, nil
	})
	if err != nil {
		return fmt.Errorf("the API server did not call the webhook at %s within %s (last probe: %v): %w", s.base, timeout, last, err)
	}
	return nil
}

// awaitInterval is how often AwaitCalls probes.
const awaitInterval = 100 * time.Millisecond

// Done is closed once the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop stops the server and waits for it; it returns the server's error,
// if it failed rather than being stopped.
func (s *Server) Stop() error {
	s.cancel()
	<-s.done
	return s.err
}
