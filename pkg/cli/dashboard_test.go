package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestDashboardRejectsBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "8080"}, `--listen "8080": want HOST:PORT`},
		{[]string{"--listen", "127.0.0.1:http"}, `port "http"`},
		{[]string{"--tls-cert-file", "tls.crt"}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"--tls-key-file", "tls.key"}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"--kubeconfig", missing}, "loading the hub kubeconfig " + missing},
	} {
		cmd := NewRootCommand()
		cmd.SetArgs(append([]string{"dashboard"}, tc.args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dashboard %v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}
