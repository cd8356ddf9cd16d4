package component

import (
	"io"
	"strings"
	"testing"
)

// TestControllerManagerRefusesBadDurations: the controller manager's
// durations are checked before anything starts, each refusal naming its
// flag.
func TestControllerManagerRefusesBadDurations(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--orphan-sweep-period=0s", "--orphan-sweep-period 0s must be positive"},
		{"--orphan-sweep-period=-1m", "--orphan-sweep-period -1m0s must be positive"},
		{"--unschedulable-threshold=0s", "--unschedulable-threshold 0s must be positive"},
		{"--drift-revert-delay=0s", "--drift-revert-delay 0s must be positive"},
		{"--drift-revert-delay=-5s", "--drift-revert-delay -5s must be positive"},
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
