package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRegisterAndAgentRefuseBadInput: mistakes are caught before any
// server is contacted, in a message that names the argument or flag.
func TestRegisterAndAgentRefuseBadInput(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"register"}, "register takes exactly one cluster NAME, got 0 arguments"},
		{[]string{"register", "Bad_Name"}, `invalid cluster NAME "Bad_Name"`},
		{[]string{"register", "edge-1", "--label", "novalue"}, "--label"},
		{[]string{"register", "edge-1", "--token-ttl", "1m"}, "--token-ttl 1m0s: must be at least 10m"},
		{[]string{"register", "edge-1", "--hub-server", "hub:6443"}, "--hub-server"},
		{[]string{"register", "edge-1", "--zone", strings.Repeat("z", 64)}, "--zone"},
		{[]string{"register", "edge-1", "--deploy"}, "--deploy needs --member-kubeconfig"},
		{[]string{"register", "edge-1", "--image", "x:1"}, "without --deploy nothing is deployed"},
		{[]string{"register", "edge-1", "--allow-rbac-propagation"}, "--allow-rbac-propagation grants the agent's ServiceAccount in the member, which only --deploy creates"},
		{[]string{"register", "edge-1", "--deploy", "--member-kubeconfig", "m", "--image", "not an image!"}, "--image"},
		{[]string{"register", "edge-1"}, "loading the hub kubeconfig"},
		{[]string{"agent"}, "--cluster is required"},
		{[]string{"agent", "--cluster", "Bad_Name"}, "--cluster: invalid cluster NAME"},
		{[]string{"agent", "--cluster", "edge-1"}, "--hub-kubeconfig is required"},
		{[]string{"agent", "--cluster", "edge-1", "--lease-duration", "5s", "--renew-deadline", "10s"}, "each must be shorter than the one before"},
		{[]string{"agent", "--cluster", "edge-1", "--controllers", "*,-scheduler"}, `--controllers: unknown controller "scheduler": valid names are cluster-status, execution, work-status`},
		{[]string{"agent", "--cluster", "edge-1", "--controllers", ""}, "--controllers is empty"},
		{[]string{"agent", "--cluster", "edge-1", "--hub-kubeconfig", "absent.kubeconfig"}, "loading the hub kubeconfig"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := run(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (output %q), want an error containing %q", err, out, tc.want)
			}
		})
	}
}
