package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestControllerManagerRejectsBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kube-api-qps", "0"}, "--kube-api-qps 0 and --kube-api-burst 1000 must both be positive"},
		{[]string{"--kube-api-burst", "-1"}, "must both be positive"},
		{[]string{"--scheduler-workers", "-2"}, "--scheduler-workers and --execution-workers must not be negative"},
		{[]string{"--webhook-port", "70000"}, "--webhook-port 70000 is not a port"},
		{[]string{"--webhook-port", "-1"}, "--webhook-port -1 is not a port"},
		{[]string{"--webhook-port", "9443", "--webhook-bind-address", "localhost"}, `--webhook-bind-address "localhost" is not an IP`},
		{[]string{"--leader-elect-renew-deadline", "20s"}, "--leader-elect-lease-duration 15s, --leader-elect-renew-deadline 20s and --leader-elect-retry-period 2s: each must be shorter than the one before"},
		{[]string{"--leader-elect-lease-duration", "5s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "4s"}, "each must be shorter than the one before"},
		{[]string{"--leader-elect-retry-period", "-1s"}, "each must be shorter than the one before"},
		{[]string{"--controllers", "*,-shceduler"}, `--controllers: unknown controller "shceduler": valid names are detector, scheduler, binding`},
		{[]string{"--controllers", "-*"}, "-* is not a selection"},
		{[]string{"--controllers", "*,"}, "--controllers has an empty item"},
		{[]string{"--controllers", "failover,-failover"}, `"failover" both enabled and disabled`},
		{[]string{}, "loading the hub kubeconfig " + missing},
	} {
		cmd := NewRootCommand()
		cmd.SetArgs(append([]string{"controller-manager", "--hub-kubeconfig", missing}, tc.args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("controller-manager %v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}
