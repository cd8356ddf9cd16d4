package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestPodReschedulerCommandFlags(t *testing.T) {
	cmd := newPodReschedulerCommand()
	for _, name := range []string{"kubeconfig", "leader-elect", "metrics-bind-address", "webhook-port",
		"webhook-configuration", "webhook-url-configuration", "failed-reasons", "restart-threshold", "reschedules-per-second"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
	cmd.SetArgs([]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing.kubeconfig")})
	cmd.SetOut(new(bytes.Buffer))
	cmd.SetErr(new(bytes.Buffer))
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "missing.kubeconfig (--kubeconfig): ") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing kubeconfig: got %v", err)
	}
}

// TestKubeSchedulerCommandHelp runs the wrapped upstream command: its
// flags (here --help) reach kube-scheduler untouched.
func TestKubeSchedulerCommandHelp(t *testing.T) {
	cmd := newKubeSchedulerCommand()
	out := new(bytes.Buffer)
	cmd.SetArgs([]string{"--help"})
	cmd.SetOut(out)
	cmd.SetErr(out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--config") {
		t.Errorf("kube-scheduler help does not list --config:\n%s", out.String())
	}
}
