package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for server at path.
func writeKubeconfig(t *testing.T, path, server string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// TestHubRestConfigSources: --hub-kubeconfig, then $KUBECONFIG, then the
// data dir's kubeconfig when it exists, then the pod's ServiceAccount.
func TestHubRestConfigSources(t *testing.T) {
	dir := t.TempDir()
	flagKC, envKC := filepath.Join(dir, "flag.kubeconfig"), filepath.Join(dir, "env.kubeconfig")
	writeKubeconfig(t, flagKC, "https://flag.example:6443")
	writeKubeconfig(t, envKC, "https://env.example:6443")
	withDataDir := t.TempDir()
	writeKubeconfig(t, filepath.Join(withDataDir, "kubeconfig"), "https://datadir.example:6443")
	emptyDataDir := t.TempDir()
	inPod := func() (*rest.Config, error) {
		return &rest.Config{Host: "https://10.96.0.1:443", BearerToken: "sa"}, nil
	}
	notInPod := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }

	for _, tc := range []struct {
		name      string
		flags     hubFlags
		env       string
		dataDir   string
		inCluster func() (*rest.Config, error)
		wantHost  string
		wantErr   []string
	}{
		{name: "flag first", flags: hubFlags{kubeconfig: flagKC}, env: envKC, dataDir: withDataDir, inCluster: inPod, wantHost: "https://flag.example:6443"},
		{name: "$KUBECONFIG before the data dir", env: envKC, dataDir: withDataDir, inCluster: inPod, wantHost: "https://env.example:6443"},
		{name: "the data dir before the pod", dataDir: withDataDir, inCluster: inPod, wantHost: "https://datadir.example:6443"},
		{name: "the pod's ServiceAccount", dataDir: emptyDataDir, inCluster: inPod, wantHost: "https://10.96.0.1:443"},
		{name: "nothing at all", dataDir: emptyDataDir, inCluster: notInPod,
			wantErr: []string{"no hub kubeconfig", filepath.Join(emptyDataDir, "kubeconfig"), "pass --hub-kubeconfig", rest.ErrNotInCluster.Error()}},
		{name: "a context without a kubeconfig", flags: hubFlags{context: "prod"}, dataDir: emptyDataDir, inCluster: inPod,
			wantErr: []string{`--hub-context "prod"`, "pass --hub-kubeconfig too"}},
		{name: "a missing explicit kubeconfig is an error, not a fallback", flags: hubFlags{kubeconfig: filepath.Join(dir, "none")}, dataDir: emptyDataDir, inCluster: inPod,
			wantErr: []string{"loading the hub kubeconfig " + filepath.Join(dir, "none")}},
		{name: "a missing $KUBECONFIG is an error, not a fallback", env: filepath.Join(dir, "none"), dataDir: emptyDataDir, inCluster: inPod,
			wantErr: []string{"loading the hub kubeconfig " + filepath.Join(dir, "none")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("SHEPHERD_DATA_DIR", tc.dataDir)
			orig := inClusterConfig
			inClusterConfig = tc.inCluster
			t.Cleanup(func() { inClusterConfig = orig })

			cfg, err := tc.flags.restConfig()
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got hub %s, want an error", cfg.Host)
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
				t.Errorf("hub %s, want %s", cfg.Host, tc.wantHost)
			}
		})
	}
}
