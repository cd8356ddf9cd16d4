package webhookserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
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
