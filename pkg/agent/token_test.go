package agent

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// jwt is an unsigned token with the given issue and expiry times: enough
// for what the agent reads of its token (the hub verifies it).
func jwt(iat, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(fmt.Sprintf(`{"iat":%d,"exp":%d}`, iat.Unix(), exp.Unix()))) + ".sig"
}

func TestRenewAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		lifetime time.Duration
		want     time.Duration // after issue
	}{
		{"a year's token renews after about 292 days", 365 * 24 * time.Hour, 292 * 24 * time.Hour},
		{"the shortest token the API server issues", 10 * time.Minute, 8 * time.Minute},
		{"a day", 24 * time.Hour, 19*time.Hour + 12*time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := renewAt(t0, t0.Add(tt.lifetime)).Sub(t0); got != tt.want {
				t.Errorf("renews %s after issue, want %s", got, tt.want)
			}
		})
	}
}

func kubeconfigWith(current, user, token string) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://hub.example:6443", CertificateAuthorityData: []byte("ca")}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.AuthInfos["someone-else"] = &clientcmdapi.AuthInfo{Token: "theirs"}
	cfg.Contexts["agent"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: user}
	cfg.CurrentContext = current
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(err)
	}
	return data
}

// TestWithToken: only the current context's user's token changes; a
// kubeconfig the agent cannot renew is refused naming why.
func TestWithToken(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{name: "the kubeconfig shepherd register writes", in: kubeconfigWith("agent", "shepherd-agent-edge-1", "old")},
		{name: "no current context", in: kubeconfigWith("", "shepherd-agent-edge-1", "old"), wantErr: "has no current context"},
		{name: "a user without a token", in: kubeconfigWith("agent", "shepherd-agent-edge-1", ""), wantErr: `user "shepherd-agent-edge-1" has no token to renew`},
		{name: "not a kubeconfig", in: []byte("clusters: ["), wantErr: "reading the hub kubeconfig"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := withToken(tt.in, "new")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.AuthInfos["shepherd-agent-edge-1"].Token; got != "new" {
				t.Errorf("token %q, want new", got)
			}
			if got := cfg.AuthInfos["someone-else"].Token; got != "theirs" {
				t.Errorf("another user's token became %q", got)
			}
			if c := cfg.Clusters["hub"]; c.Server != "https://hub.example:6443" || string(c.CertificateAuthorityData) != "ca" {
				t.Errorf("the cluster changed: %+v", c)
			}
		})
	}
}

func TestFileTokenStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(path, kubeconfigWith("agent", "u", "old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (FileTokenStore{Path: path}).Store(context.Background(), "new"); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AuthInfos["u"].Token != "new" {
		t.Errorf("stored token %q, want new", cfg.AuthInfos["u"].Token)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files beside the kubeconfig, want none left over", len(entries)-1)
	}
	// Bad input: a file that is not there is an error, not a new file.
	missing := filepath.Join(t.TempDir(), "missing")
	if err := (FileTokenStore{Path: missing}).Store(context.Background(), "new"); err == nil {
		t.Error("storing into a missing file: no error")
	}
}

// TestWithRenewableToken: only a JWT bearer token is renewed, and a
// renewal reaches requests made by clients built before it.
func TestWithRenewableToken(t *testing.T) {
	now := time.Now()
	token := jwt(now, now.Add(time.Hour))
	for _, tt := range []struct {
		name string
		cfg  *rest.Config
		want bool
	}{
		{"a registered agent's token", &rest.Config{Host: "https://hub", BearerToken: token}, true},
		{"client certificates", &rest.Config{Host: "https://hub", TLSClientConfig: rest.TLSClientConfig{CertData: []byte("c"), KeyData: []byte("k")}}, false},
		{"a static token", &rest.Config{Host: "https://hub", BearerToken: "static"}, false},
		{"a token file (its owner renews it)", &rest.Config{Host: "https://hub", BearerToken: token, BearerTokenFile: "/var/run/token"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, holder := withRenewableToken(tt.cfg)
			if (holder != nil) != tt.want {
				t.Fatalf("renewable: %v, want %v", holder != nil, tt.want)
			}
			if !tt.want && out != tt.cfg {
				t.Error("a config that is not renewed was copied")
			}
		})
	}

	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	cfg, holder := withRenewableToken(&rest.Config{Host: srv.URL, BearerToken: token})
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	for _, tok := range []string{token, "renewed"} {
		holder.set(tok)
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := []string{"Bearer " + token, "Bearer renewed"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("requests carried %q, want %q", seen, want)
	}
}
