package simmetrics

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// groupsDiscovery answers ServerGroupsAndResources with err; the rest is
// the fake's.
type groupsDiscovery struct {
	fakediscovery.FakeDiscovery
	err error
}

func (d *groupsDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return nil, nil, d.err
}

func TestStaleInDiscovery(t *testing.T) {
	other := schema.GroupVersion{Group: "example.com", Version: "v1"}
	tests := []struct {
		name string
		err  error
		want string // a substring; "" means none is stale
	}{
		{name: "fresh", err: nil, want: ""},
		{name: "metrics stale", err: &discovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
			gv: errors.New("stale GroupVersion discovery: metrics.k8s.io/v1beta1")}}, want: "metrics.k8s.io/v1beta1"},
		{name: "custom metrics stale, as a restarted member's API server reports it", err: &discovery.ErrGroupDiscoveryFailed{
			Groups: map[schema.GroupVersion]error{
				customGV: errors.New("stale GroupVersion discovery: custom.metrics.k8s.io/v1beta2")}},
			want: "custom.metrics.k8s.io/v1beta2"},
		{name: "another aggregated API stale is not ours to wait for", err: &discovery.ErrGroupDiscoveryFailed{
			Groups: map[schema.GroupVersion]error{other: errors.New("stale")}}, want: ""},
		{name: "discovery itself failing", err: errors.New("connection refused"), want: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &groupsDiscovery{FakeDiscovery: fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}, err: tt.err}
			got := staleInDiscovery(d)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("staleInDiscovery = %q, want one naming %q", got, tt.want)
			}
		})
	}
}
