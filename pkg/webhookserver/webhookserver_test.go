package webhookserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServe calls a route over TLS, trusting only the server's CA, and
// stops the server.
func TestServe(t *testing.T) {
	s, err := Start(context.Background(), Options{
		Name: "test",
		Routes: []Route{{Path: "/hello", Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "hello")
		})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CABundle()) {
		t.Fatal("CA bundle holds no certificate")
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/hello", http.StatusOK, "hello"},
		{"/other", http.StatusNotFound, ""},
	} {
		resp, err := c.Get(s.URL(tc.path))
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || (tc.body != "" && string(body) != tc.body) {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.code, tc.body)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := c.Get(s.URL("/hello")); err == nil {
		t.Error("the server still answers after Stop")
	}
}

func TestStartRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Name: "x", BindAddress: "localhost"}} {
		if s, err := Start(context.Background(), o); err == nil {
			_ = s.Stop()
			t.Errorf("Start(%+v) succeeded", o)
		}
	}
}

// TestAwaitCalls: AwaitCalls returns once a probe makes a request arrive,
// as the API server's call does once it uses a configuration naming this
// server; a probe that never does (the API server still calls a previous
// process's port) ends in the probe's last error.
func TestAwaitCalls(t *testing.T) {
	s, err := Start(t.Context(), Options{
		Name:   "test",
		Routes: []Route{{Path: "/hello", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CABundle())
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	stale := errors.New("connection refused by the previous port")
	for _, tc := range []struct {
		name string
		// callsFrom is the first probe that reaches the server (0: none).
		callsFrom int
		wantErr   string
	}{
		{name: "the third probe reaches the server", callsFrom: 3},
		{name: "no probe reaches the server", wantErr: stale.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probes := 0
			err := s.AwaitCalls(t.Context(), time.Second, func(ctx context.Context) error {
				probes++
				if tc.callsFrom == 0 || probes < tc.callsFrom {
					return stale
				}
				resp, err := c.Get(s.URL("/hello"))
				if err == nil {
					resp.Body.Close()
				}
				return err
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("AwaitCalls: %v", err)
			case tc.wantErr == "" && probes != tc.callsFrom:
				t.Errorf("AwaitCalls returned after %d probes, want %d", probes, tc.callsFrom)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("AwaitCalls = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}
