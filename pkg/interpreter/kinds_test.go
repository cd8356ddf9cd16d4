package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every name the CLI accepts resolves to one kind, and every kind with a
// health rule or replicas says which apiVersion it reads.
func TestKindTable(t *testing.T) {
	seen := map[string]schema.GroupKind{}
	for gk, k := range builtin {
		if k.apiVersion == "" {
			t.Errorf("%v: no apiVersion", gk)
		}
		if gv, err := schema.ParseGroupVersion(k.apiVersion); err != nil || gv.Group != gk.Group {
			t.Errorf("%v: apiVersion %q is not of its group", gk, k.apiVersion)
		}
		for _, n := range k.names {
			if other, dup := seen[n]; dup {
				t.Errorf("name %q for both %v and %v", n, other, gk)
			}
			seen[n] = gk
		}
	}
	for _, tc := range []struct{ name, apiVersion, kind string }{
		{"deploy", "apps/v1", "Deployment"}, {"Deployments", "apps/v1", "Deployment"}, {"svc", "v1", "Service"},
		{"hpa", "autoscaling/v2", "HorizontalPodAutoscaler"}, {"cj", "batch/v1", "CronJob"},
	} {
		if av, k, ok := KindByName(tc.name); !ok || av != tc.apiVersion || k != tc.kind {
			t.Errorf("KindByName(%q) = %s %s %v", tc.name, av, k, ok)
		}
	}
	if _, _, ok := KindByName("widget"); ok {
		t.Error("an unknown name resolved")
	}
}
