package crd

import (
	"strings"
	"testing"
)

// TestClusterNodeModelValidation: the API server refuses a node model it
// could not trust: a group of no nodes, or more groups than the bound.
func TestClusterNodeModelValidation(t *testing.T) {
	v := loadValidator(t, "clusters.cluster.shepherd.io")
	cluster := func(nodes string) string {
		return "apiVersion: cluster.shepherd.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec: {syncMode: Pull}\nstatus:\n  resourceSummary:\n    nodes: " + nodes + "\n"
	}
	group := "{count: 2, free: {cpu: 1500m, memory: 8Gi, pods: '110'}}"
	cases := []struct {
		name, nodes string
		want        []string
	}{
		{"a model", "[" + group + "]", nil},
		{"a group of no nodes", "[{count: 0, free: {cpu: '1'}}]", []string{"status.resourceSummary.nodes[0].count", "greater than or equal to 1"}},
		{"more groups than the bound", "[" + strings.Repeat(group+", ", 64) + group + "]", []string{"status.resourceSummary.nodes", "must have at most 64 items"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			errs := v.validate(t, cluster(tt.nodes))
			if len(tt.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs.ToAggregate())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("want errors containing %q, got none", tt.want)
			}
			for _, w := range tt.want {
				if msg := errs.ToAggregate().Error(); !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestClusterRoomBoundsValidation: an administrator's room bounds hold at
// least one node and no more than a million.
func TestClusterRoomBoundsValidation(t *testing.T) {
	v := loadValidator(t, "clusters.cluster.shepherd.io")
	cluster := func(bounds string) string {
		return "apiVersion: cluster.shepherd.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec: {syncMode: Pull, roomBounds: " + bounds + "}\n"
	}
	for _, tc := range []struct {
		name, bounds string
		want         []string
	}{
		{"bounds", "{maxNodes: 20, maxNodeRoom: {cpu: '64', memory: 256Gi}}", nil},
		{"no nodes", "{maxNodes: 0}", []string{"spec.roomBounds.maxNodes", "greater than or equal to 1"}},
		{"beyond a million", "{maxNodes: 2000000}", []string{"spec.roomBounds.maxNodes", "should be less than or equal to 1000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := v.validate(t, cluster(tc.bounds))
			if len(tc.want) == 0 {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs.ToAggregate())
				}
				return
			}
			for _, w := range tc.want {
				if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), w) {
					t.Errorf("want an error with %q, got %v", w, errs.ToAggregate())
				}
			}
		})
	}
}
