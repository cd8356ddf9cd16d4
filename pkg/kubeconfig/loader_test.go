package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// write writes a kubeconfig at path with one context per server (named
// as the map's keys) and current as its current context.
func write(t *testing.T, path, current string, contexts map[string]string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, server := range contexts {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t-" + name}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = current
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

func TestLoader(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	write(t, at("a"), "a", map[string]string{"a": "https://a.example:6443"})
	write(t, at("b"), "b", map[string]string{"b": "https://b.example:6443", "shared": "https://b-shared.example:6443"})
	write(t, at("c"), "", map[string]string{"shared": "https://c-shared.example:6443", "c": "https://c.example:6443"})
	write(t, at("nocurrent"), "", map[string]string{"x": "https://x.example:6443"})
	write(t, at("dangling"), "gone", map[string]string{"x": "https://x.example:6443"})
	dataDir := filepath.Join(dir, "data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dataDir, "kubeconfig"), "up", map[string]string{"up": "https://up.example:6443"})
	emptyDataDir := t.TempDir()
	list := func(files ...string) string { return strings.Join(files, string(os.PathListSeparator)) }
	inPod := func() (*rest.Config, error) { return &rest.Config{Host: "https://10.96.0.1:443"}, nil }
	notInPod := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }

	for _, tc := range []struct {
		name     string
		loader   Loader
		env      string
		inPod    bool
		wantHost string
		wantErr  []string
	}{
		{name: "flag first", loader: Hub(at("a"), "", dataDir), env: at("b"), inPod: true, wantHost: "https://a.example:6443"},
		{name: "$KUBECONFIG before the data dir", loader: Hub("", "", dataDir), env: at("b"), inPod: true, wantHost: "https://b.example:6443"},
		{name: "the data dir before the pod", loader: Hub("", "", dataDir), inPod: true, wantHost: "https://up.example:6443"},
		{name: "the pod's ServiceAccount", loader: Hub("", "", emptyDataDir), inPod: true, wantHost: "https://10.96.0.1:443"},
		{name: "a $KUBECONFIG list is merged: the first current context wins", loader: Hub("", "", emptyDataDir), env: list(at("c"), at("b")), wantHost: "https://b.example:6443"},
		{name: "in a merged list the first file to define a context wins", loader: Hub("", "shared", emptyDataDir), env: list(at("c"), at("b")), wantHost: "https://c-shared.example:6443"},
		{name: "a flag may list files too", loader: Hub(list(at("a"), at("c")), "c", emptyDataDir), wantHost: "https://c.example:6443"},
		{name: "missing files of a list are skipped, as kubectl does", loader: Hub(list(at("none"), at("a")), "", emptyDataDir), wantHost: "https://a.example:6443"},
		{name: "the context flag picks a context", loader: Hub(at("b"), "shared", emptyDataDir), wantHost: "https://b-shared.example:6443"},
		{name: "a context that does not exist", loader: Hub(at("b"), "prod", emptyDataDir),
			wantErr: []string{`--hub-context "prod" is not a context of the hub kubeconfig`, at("b"), "use one of: b, shared"}},
		{name: "no current context", loader: Hub(at("nocurrent"), "", emptyDataDir), wantErr: []string{"has no current context: pass --hub-context (contexts: x)"}},
		{name: "a current context that does not exist", loader: Hub(at("dangling"), "", emptyDataDir), wantErr: []string{`the current context "gone"`, "pass --hub-context (contexts: x)"}},
		{name: "a missing explicit kubeconfig is an error, not a fallback", loader: Hub(at("none"), "", dataDir), inPod: true,
			wantErr: []string{"loading the hub kubeconfig " + at("none"), "does not exist", "pass --hub-kubeconfig"}},
		{name: "a missing $KUBECONFIG is an error, not a fallback", loader: Hub("", "", dataDir), env: at("none"), inPod: true,
			wantErr: []string{"loading the hub kubeconfig " + at("none") + " ($KUBECONFIG)"}},
		{name: "nothing at all", loader: Hub("", "", emptyDataDir),
			wantErr: []string{"no hub kubeconfig", filepath.Join(emptyDataDir, "kubeconfig") + " does not exist", "pass --hub-kubeconfig", rest.ErrNotInCluster.Error()}},
		{name: "a context without a kubeconfig", loader: Hub("", "prod", emptyDataDir), inPod: true,
			wantErr: []string{`--hub-context "prod"`, "pass --hub-kubeconfig too"}},
		{name: "a member's kubeconfig", loader: Member(at("a"), ""), env: at("b"), wantHost: "https://a.example:6443"},
		{name: "a member ignores $KUBECONFIG (it names the hub) and uses its pod", loader: Member("", ""), env: at("b"), inPod: true, wantHost: "https://10.96.0.1:443"},
		{name: "a member's context that does not exist", loader: Member(at("a"), "b"), wantErr: []string{`--context "b" is not a context of the member kubeconfig`, "use one of: a"}},
		{name: "a member outside a pod", loader: Member("", ""), wantErr: []string{"no member kubeconfig: --kubeconfig is not set", "pass --kubeconfig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			l := tc.loader
			l.inClusterConfig = notInPod
			if tc.inPod {
				l.inClusterConfig = inPod
			}
			cfg, err := l.Load()
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got %s, want an error", cfg.Host)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.wantHost {
				t.Errorf("host %s, want %s", cfg.Host, tc.wantHost)
			}
		})
	}
}
