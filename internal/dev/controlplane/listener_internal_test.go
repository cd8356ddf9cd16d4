package controlplane

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestReleasedListenerWaitsForItsServer: releasing the apiserver's
// listener frees its port at once, but its server's Serve does not return
// until the server itself shuts down. kube-apiserver panics when Serve
// returns before its stop channel is closed, which a chaos run met when a
// member that did not stop in time had its listener closed under it.
func TestReleasedListenerWaitsForItsServer(t *testing.T) {
	ln, srv, served := serve(t)
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("the server does not answer: %v", err)
	}
	resp.Body.Close()

	if err := ln.release(); err != nil {
		t.Fatal(err)
	}
	again, err := net.Listen("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the port is not free after release: %v", err)
	}
	again.Close()
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) before its server was shut down", err)
	case <-time.After(200 * time.Millisecond):
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
	}
}

// TestUnreleasedListenerClosesAsAListener: without a release, the server's
// close ends Serve as with a plain listener.
func TestUnreleasedListenerClosesAsAListener(t *testing.T) {
	_, srv, served := serve(t)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
	}
}

// serve serves HTTP on a releasable listener of a free port; served
// receives what Serve returns.
func serve(t *testing.T) (*releasableListener, *http.Server, <-chan error) {
	t.Helper()
	socket, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newReleasableListener(socket)
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return ln, srv, served
}
