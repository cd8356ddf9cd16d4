package resourceselector

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestExcluded(t *testing.T) {
	tests := []struct {
		gk        schema.GroupKind
		ns, name  string
		want      bool
		wantKinds bool
	}{
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, ns: "default", name: "web"},
		{gk: schema.GroupKind{Kind: "ConfigMap"}, ns: "default", name: "app"},
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "team-a"},
		{gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, name: "admin"},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, ns: "kube-system", name: "coredns", want: true},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, ns: "shepherd-es-member1", name: "x", want: true},
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "kube-public", want: true},
		{gk: schema.GroupKind{Kind: "Namespace"}, name: "shepherd-es-member1", want: true},
		{gk: schema.GroupKind{Kind: "ConfigMap"}, ns: "default", name: "kube-root-ca.crt", want: true},
		{gk: schema.GroupKind{Kind: "ServiceAccount"}, ns: "default", name: "default", want: true},
		{gk: schema.GroupKind{Kind: "Service"}, ns: "default", name: "kubernetes", want: true},
		{gk: schema.GroupKind{Kind: "Node"}, name: "n1", want: true, wantKinds: true},
		{gk: schema.GroupKind{Kind: "Event"}, ns: "default", name: "e", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, ns: "default", name: "l", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "metrics.k8s.io", Kind: "PodMetrics"}, ns: "default", name: "p", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "custom.metrics.k8s.io", Kind: "MetricValueList"}, ns: "default", name: "m", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "external.metrics.k8s.io", Kind: "ExternalMetricValueList"}, ns: "default", name: "m", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "work.shepherd.io", Kind: "Work"}, ns: "default", name: "w", want: true, wantKinds: true},
		{gk: schema.GroupKind{Group: "policy.shepherd.io", Kind: "PropagationPolicy"}, ns: "default", name: "p", want: true, wantKinds: true},
	}
	for _, tt := range tests {
		if got := Excluded(tt.gk, tt.ns, tt.name); got != tt.want {
			t.Errorf("Excluded(%s, %q, %q) = %v, want %v", tt.gk, tt.ns, tt.name, got, tt.want)
		}
		if got := ExcludedKind(tt.gk); got != tt.wantKinds {
			t.Errorf("ExcludedKind(%s) = %v, want %v", tt.gk, got, tt.wantKinds)
		}
	}
}
