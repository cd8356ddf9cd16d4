package dashboard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// Config starts a dashboard against a hub.
type Config struct {
	// Hub is the hub's client configuration (a kubeconfig).
	Hub *rest.Config
	// Listen is host:port; beyond loopback every request needs a token.
	Listen   string
	ReadOnly bool
	// CertFile and KeyFile serve HTTPS; both or neither.
	CertFile, KeyFile string
	// Interpreter is Options.Interpreter: the process's, when the
	// dashboard runs beside the controllers (`shepherd up`), so that it
	// knows the kinds customizations teach them.
	Interpreter interpreter.Interpreter
	Logger      logr.Logger
}

// ValidateListen checks a listen address: HOST:PORT, the port a number
// from 0 to 65535 (0 picks a free one).
func ValidateListen(listen string) error {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("want HOST:PORT, e.g. 127.0.0.1:8080 (%v)", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 0 to 65535", port)
	}
	return nil
}

// Start watches the hub, serves the dashboard until ctx ends and returns
// its URL; done receives the server's error when it stops.
func Start(ctx context.Context, c Config) (url string, done <-chan error, err error) {
	if err := ValidateListen(c.Listen); err != nil {
		return "", nil, err
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return "", nil, errors.New("--tls-cert-file and --tls-key-file go together: give both or neither")
	}
	if c.CertFile != "" {
		// A certificate that does not load fails here, not after the URL
		// was printed.
		if _, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
			return "", nil, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err)
		}
	}
	// Listen before watching: a taken port must not leave a watch behind.
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return "", nil, fmt.Errorf("listening on %s: %w", c.Listen, err)
	}
	srcCtx, cancel := context.WithCancel(ctx)
	fail := func(err error) (string, <-chan error, error) {
		cancel()
		_ = ln.Close()
		return "", nil, err
	}
	src, err := NewHubSource(srcCtx, c.Hub)
	if err != nil {
		return fail(err)
	}
	srv, err := New(Options{Hub: c.Hub, Source: src, ReadOnly: c.ReadOnly, RequireToken: !IsLoopback(c.Listen),
		Interpreter: c.Interpreter, Logger: c.Logger})
	if err != nil {
		return fail(err)
	}
	done = ServeListener(srcCtx, ln, srv, c.CertFile, c.KeyFile)
	addr := ln.Addr()
	scheme := "http"
	if c.CertFile != "" {
		scheme = "https"
	}
	return scheme + "://" + addr.String(), done, nil
}
