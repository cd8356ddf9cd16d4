// Package webhook is the pod rescheduler's mutating admission webhook: on
// pod creation it copies the owning workload's nodes-tried list onto the
// pod (annotation shepherd.io/excluded-nodes) for the scheduler plugin to
// honour.
//
// The server manages its own TLS: each Start generates a CA and a serving
// certificate in memory and publishes the CA in the webhook
// configuration's caBundle, so there is no certificate to provision or
// rotate. Two ways to reach it:
//   - in-process (Options.URLConfiguration): the server writes the whole
//     configuration with a url: client config pointing at itself, e.g.
//     https://127.0.0.1:PORT/mutate-v1-pod for a member of `shepherd up`;
//   - in a cluster: config/podrescheduler deploys the configuration with a
//     service: client config, and the server only adds its CA to it.
//
// Stopping the server leaves the configuration in place: with failurePolicy
// Ignore the apiserver admits pods unchanged while nothing answers.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// shutdownTimeout bounds how long Stop waits for requests in flight; the
// apiserver gives up on them after timeoutSeconds anyway.
const shutdownTimeout = timeoutSeconds * time.Second

// Options configure the webhook server.
type Options struct {
	// BindAddress is the IP to listen on (default 127.0.0.1; 0.0.0.0 in a
	// pod).
	BindAddress string
	// Port to listen on; 0 picks a free one.
	Port int
	// Client reads workloads and writes the webhook configuration. It must
	// not be a cached client: a replacement pod is created right after the
	// controller recorded its predecessor's node, and the webhook must see
	// that write.
	Client client.Client
	// ConfigurationName is the MutatingWebhookConfiguration to publish the
	// CA in (default DefaultConfigurationName).
	ConfigurationName string
	// URLConfiguration makes Start write the whole configuration, with a
	// url: client config pointing at this server; otherwise the
	// configuration must exist and only its caBundle is updated.
	URLConfiguration bool
	// DNSNames are extra names for the serving certificate, e.g. the
	// Service's "NAME.NAMESPACE.svc". The bind address, when it is a
	// specific IP, is always included.
	DNSNames []string
	// Logger receives the server's logs (default: discard).
	Logger logr.Logger
}

// Server is a running webhook server.
type Server struct {
	url    string
	caPEM  []byte
	srv    *http.Server
	done   chan struct{}
	err    error // written before done is closed
	cancel context.CancelFunc
}

// Start serves the webhook until ctx ends or Stop is called. It returns
// once the server listens and the configuration carries its CA.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Client == nil {
		return nil, errors.New("webhook: Options.Client is required")
	}
	if opts.BindAddress == "" {
		opts.BindAddress = "127.0.0.1"
	}
	if opts.ConfigurationName == "" {
		opts.ConfigurationName = DefaultConfigurationName
	}
	log := opts.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	ip := net.ParseIP(opts.BindAddress)
	if ip == nil {
		return nil, fmt.Errorf("webhook: bind address %q is not an IP", opts.BindAddress)
	}
	var ips []net.IP
	if !ip.IsUnspecified() {
		ips = append(ips, ip)
	}
	now := time.Now()
	certs, err := newSelfSigned(opts.DNSNames, ips, now)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.Port)))
	if err != nil {
		return nil, fmt.Errorf("webhook: listening: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	url := "https://" + net.JoinHostPort(opts.BindAddress, strconv.Itoa(port)) + Path

	hook, err := admission.StandaloneWebhook(&admission.Webhook{Handler: &mutator{reader: opts.Client, log: log}},
		admission.StandaloneOptions{Logger: log, MetricsPath: Path})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, hook)
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{
		url:   url,
		caPEM: certs.caPEM,
		srv: &http.Server{
			Handler:           mux,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{certs.cert}, MinVersion: tls.VersionTLS12},
			ReadHeaderTimeout: shutdownTimeout,
		},
		done:   make(chan struct{}),
		cancel: cancel,
	}
	go s.serve(ctx, ln, log)

	if opts.URLConfiguration {
		err = writeURLConfiguration(ctx, opts.Client, opts.ConfigurationName, url, certs.caPEM)
	} else {
		err = injectCABundle(ctx, opts.Client, opts.ConfigurationName, certs.caPEM, now)
	}
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("webhook: publishing the CA in MutatingWebhookConfiguration %s: %w", opts.ConfigurationName, err)
	}
	log.Info("pod rescheduler webhook serving", "url", url, "configuration", opts.ConfigurationName)
	return s, nil
}

// serve runs the HTTPS server until ctx ends, then shuts it down.
func (s *Server) serve(ctx context.Context, ln net.Listener, log logr.Logger) {
	errCh := make(chan error, 1)
	go func() { errCh <- s.srv.ServeTLS(ln, "", "") }()
	var err error
	select {
	case err = <-errCh:
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		err = s.srv.Shutdown(shutdownCtx)
		cancel()
		<-errCh
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

// URL is the webhook's URL, for a url: client config.
func (s *Server) URL() string { return s.url }

// CABundle is the PEM CA certificate the serving certificate chains to.
func (s *Server) CABundle() []byte { return s.caPEM }

// Done is closed once the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop stops the server and waits for it; it returns the server's error,
// if it failed rather than being stopped.
func (s *Server) Stop() error {
	s.cancel()
	<-s.done
	return s.err
}
