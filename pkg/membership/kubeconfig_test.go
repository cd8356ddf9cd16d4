package membership

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a two-context kubeconfig whose "files" context
// references a CA, client certificate and token on disk (relative paths),
// as kubeadm- or kind-style kubeconfigs do.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"ca.crt": "CA-PEM", "client.crt": "CERT-PEM", "client.key": "KEY-PEM", "token": "file-token\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://a.example:6443", CertificateAuthorityData: []byte("CA-A")}
	kc.Clusters["files"] = &clientcmdapi.Cluster{Server: "https://files.example:6443", CertificateAuthority: "ca.crt"}
	kc.AuthInfos["a"] = &clientcmdapi.AuthInfo{Token: "token-a"}
	kc.AuthInfos["files"] = &clientcmdapi.AuthInfo{ClientCertificate: "client.crt", ClientKey: "client.key", TokenFile: "token"}
	kc.AuthInfos["exec"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "gcloud", APIVersion: "client.authentication.k8s.io/v1"}}
	kc.Contexts["a"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "a"}
	kc.Contexts["files"] = &clientcmdapi.Context{Cluster: "files", AuthInfo: "files"}
	kc.Contexts["exec"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "exec"}
	kc.CurrentContext = "a"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadKubeconfig(t *testing.T) {
	path := writeKubeconfig(t)

	cur, err := loadKubeconfig(nil, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cur.context != "a" || cur.server != "https://a.example:6443" || len(cur.config.Contexts) != 1 || len(cur.config.AuthInfos) != 1 {
		t.Errorf("current context: %+v, %d contexts", cur, len(cur.config.Contexts))
	}

	files, err := loadKubeconfig(nil, path, "files")
	if err != nil {
		t.Fatal(err)
	}
	b, err := files.bytes()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	u := stored.AuthInfos["files"]
	c := stored.Clusters["files"]
	if string(c.CertificateAuthorityData) != "CA-PEM" || string(u.ClientCertificateData) != "CERT-PEM" ||
		string(u.ClientKeyData) != "KEY-PEM" || u.Token != "file-token" || u.TokenFile != "" || c.CertificateAuthority != "" {
		t.Errorf("files not embedded: cluster %+v user %+v", c, u)
	}
	if stored.CurrentContext != "files" || len(stored.Clusters) != 1 {
		t.Errorf("not minimized: current %q, %d clusters", stored.CurrentContext, len(stored.Clusters))
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		data          []byte
		path, context string
		want          string
	}{
		{"missing context", nil, path, "nope", `--context "nope" not found in --kubeconfig ` + path + ` (contexts: a, exec, files)`},
		{"exec plugin", data, "", "exec", "exec or auth-provider plugin"},
		{"no kubeconfig", nil, "", "", "--kubeconfig is required"},
		{"unreadable file", nil, filepath.Join(t.TempDir(), "missing"), "", "no such file"},
		{"garbage", []byte("{{{"), "", "", "--kubeconfig"},
		{"no current context", []byte("apiVersion: v1\nkind: Config\n"), "", "", "has no current context: pass --context (contexts: none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadKubeconfig(tc.data, tc.path, tc.context)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts JoinOptions
		want string
	}{
		{"ok", JoinOptions{Name: "eu-west-1", Labels: map[string]string{"env": "prod", "shepherd.io/tier": ""}}, ""},
		{"upper case", JoinOptions{Name: "EU"}, `invalid cluster NAME "EU"`},
		{"underscore", JoinOptions{Name: "eu_1"}, `invalid cluster NAME "eu_1"`},
		{"empty", JoinOptions{}, `invalid cluster NAME ""`},
		{"49 chars", JoinOptions{Name: strings.Repeat("a", 49)}, "at most 48 characters"},
		{"48 chars", JoinOptions{Name: strings.Repeat("a", 48)}, ""},
		{"bad label key", JoinOptions{Name: "a", Labels: map[string]string{"bad key": "v"}}, "--label bad key=v: invalid key"},
		{"bad label value", JoinOptions{Name: "a", Labels: map[string]string{"k": "-v"}}, "--label k=-v: invalid value"},
		{"long region", JoinOptions{Name: "a", Region: strings.Repeat("r", 64)}, "--region"},
		{"unknown credentials", JoinOptions{Name: "a", Credentials: "certificate"}, `--credentials "certificate": use service-account or kubeconfig`},
		{"kubeconfig credentials", JoinOptions{Name: "a", Credentials: CredentialsKubeconfig}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			err := o.validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.Namespace != DefaultNamespace || o.ProbeTimeout != DefaultProbeTimeout {
					t.Errorf("defaults not applied: %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
