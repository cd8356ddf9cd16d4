package v1alpha1

import (
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func TestCopyState(t *testing.T) {
	for _, tc := range []struct {
		name string
		item AggregatedStatusItem
		want string
	}{
		{"nothing collected yet", AggregatedStatusItem{}, "Unknown"},
		{"applied, no health rule", AggregatedStatusItem{Applied: true, Health: policyv1alpha1.ResourceUnknown}, CopyApplied},
		{"applied, health not reported", AggregatedStatusItem{Applied: true}, CopyApplied},
		{"applied and healthy", AggregatedStatusItem{Applied: true, Health: policyv1alpha1.ResourceHealthy}, "Healthy"},
		{"applied and unhealthy", AggregatedStatusItem{Applied: true, Health: policyv1alpha1.ResourceUnhealthy}, "Unhealthy"},
		{"in conflict", AggregatedStatusItem{AppliedReason: "Conflict", Health: policyv1alpha1.ResourceUnknown}, "Conflict"},
		{"failed, health stale", AggregatedStatusItem{AppliedReason: "Failed", Health: policyv1alpha1.ResourceHealthy}, "Failed"},
		{"not applied, no reason", AggregatedStatusItem{Health: policyv1alpha1.ResourceHealthy}, "Healthy"},
	} {
		if got := tc.item.State(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
