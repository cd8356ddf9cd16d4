package agent

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Options
		want string // empty: valid
	}{
		{"defaults", Options{Cluster: "edge-1"}, ""},
		{"no cluster", Options{}, "cluster name is required"},
		{"short lease, default renew deadline", Options{Cluster: "edge-1", LeaseDuration: 20 * time.Second}, "each must be shorter"},
		{"renew deadline not below the lease", Options{Cluster: "edge-1", LeaseDuration: 4 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: time.Second}, "each must be shorter"},
		{"retry period not below the renew deadline", Options{Cluster: "edge-1", LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 3 * time.Second}, "each must be shorter"},
		{"negative retry cap", Options{Cluster: "edge-1", RetryMaxDelay: -time.Second}, "--retry-max-delay -1s is negative"},
		{"negative restart delay", Options{Cluster: "edge-1", RestartDelay: -time.Second}, "neither may be negative"},
		{"negative hub grace", Options{Cluster: "edge-1", HubGrace: -time.Second}, "neither may be negative"},
		{"a test's short timing", Options{Cluster: "edge-1", LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: time.Second}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("valid options refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
