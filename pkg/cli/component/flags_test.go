package component

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
)

// TestControllerManagerRefusesBadFlags: the controller manager's
// durations, ClusterSet ID and selector are checked before anything starts,
// each refusal naming its flag.
func TestControllerManagerRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--orphan-sweep-period=0s", "--orphan-sweep-period 0s must be positive"},
		{"--orphan-sweep-period=-1m", "--orphan-sweep-period -1m0s must be positive"},
		{"--unschedulable-threshold=0s", "--unschedulable-threshold 0s must be positive"},
		{"--drift-revert-delay=0s", "--drift-revert-delay 0s must be positive"},
		{"--drift-revert-delay=-5s", "--drift-revert-delay -5s must be positive"},
		{"--clusterset=Fleet_A", `--clusterset "Fleet_A" is not a valid ClusterSet ID`},
		{"--clusterset=", `--clusterset "" is not a valid ClusterSet ID`},
		{"--clusterset-selector=tier in prod", `--clusterset-selector "tier in prod"`},
		{"--mcs-endpoint-grace-period=0s", "--mcs-endpoint-grace-period 0s and --mcs-max-endpoints-per-cluster 500 must be positive"},
		{"--mcs-max-endpoints-per-cluster=-1", "--mcs-endpoint-grace-period 30s and --mcs-max-endpoints-per-cluster -1 must be positive"},
	} {
		cmd := NewControllerManagerCommand()
		cmd.SetArgs([]string{tc.flag})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error with %q, got %v", tc.flag, tc.want, err)
		}
	}
}

// TestAgentRefusesBadDurations: the agent checks its durations before it
// reads any kubeconfig, each refusal naming its flag.
func TestAgentRefusesBadDurations(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--drift-revert-delay=0s", "--drift-revert-delay 0s must be positive"},
		{"--orphan-sweep-period=-1m", "--orphan-sweep-period -1m0s must be positive"},
	} {
		cmd := NewAgentCommand()
		cmd.SetArgs([]string{"--cluster=edge-1", tc.flag})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error with %q, got %v", tc.flag, tc.want, err)
		}
	}
}

// TestControllerManagerRefusesBadSchedulerConfig: --scheduler-config is
// read and checked before anything starts; a bad file stops the command
// with the flag, the file and the field at fault.
func TestControllerManagerRefusesBadSchedulerConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, schedulerConfigHeader+"profiles:\n- plugins: {score: {enabled: [{name: Capacity, weight: 0}]}}\n")
	for _, tc := range []struct{ file, want string }{
		{bad, "--scheduler-config " + bad + ": profiles[0].plugins.score.enabled[0].weight: must be between 1 and"},
		{filepath.Join(dir, "missing.yaml"), "--scheduler-config open " + filepath.Join(dir, "missing.yaml")},
	} {
		cmd := NewControllerManagerCommand()
		cmd.SetArgs([]string{"--scheduler-config", tc.file})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error with %q, got %v", tc.file, tc.want, err)
		}
	}
}

// TestLoadSchedulerConfig: a good file sets the scheduling options'
// profile; no file leaves the default.
func TestLoadSchedulerConfig(t *testing.T) {
	var o scheduling.Options
	if err := loadSchedulerConfig("", &o); err != nil || o.Profile != nil {
		t.Fatalf("no file: %v, %+v", err, o.Profile)
	}
	good := filepath.Join(t.TempDir(), "good.yaml")
	writeFile(t, good, schedulerConfigHeader+"profiles:\n- name: gpu-scheduler\n  plugins: {score: {disabled: [{name: Capacity}]}}\n")
	if err := loadSchedulerConfig(good, &o); err != nil {
		t.Fatal(err)
	}
	if o.Profile == nil || o.Profile.Name != "gpu-scheduler" || len(o.Profile.Scores) != 2 {
		t.Errorf("profile %+v, want gpu-scheduler without Capacity", o.Profile)
	}
}

const schedulerConfigHeader = "apiVersion: config.shepherd.io/v1alpha1\nkind: SchedulerConfiguration\n"

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
