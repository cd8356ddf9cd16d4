package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every name the CLI accepts resolves to one kind, and every kind with a
// health rule or replicas says which apiVersion it reads. Every kind of
// several pod templates says how to find its pods, by a selector or a
// label, never both: without them no unschedulable pod of a gang is
// counted, and the descheduler never moves it; and which component each
// of them runs, by labels that each name one, or the status cannot say
// which component does not fit.
func TestKindTable(t *testing.T) {
	seen := map[string]schema.GroupKind{}
	for gk, k := range builtin {
		if k.apiVersion == "" {
			t.Errorf("%v: no apiVersion", gk)
		}
		if k.components != nil && k.pods == nil {
			t.Errorf("%v: components but no way to its pods", gk)
		}
		if k.components != nil && len(k.podComponent) == 0 {
			t.Errorf("%v: components but no way to tell its pods' components", gk)
		}
		for _, l := range k.podComponent {
			if l.key == "" || (l.names != nil && len(l.names) == 0) {
				t.Errorf("%v: component label %+v", gk, l)
			}
		}
		if p := k.pods; p != nil {
			if (p.selector == nil) == (p.label == "") {
				t.Errorf("%v: pods by selector %v and label %q: one of them", gk, p.selector, p.label)
			}
			for _, w := range p.with {
				if w.key == "" || len(w.values) == 0 {
					t.Errorf("%v: pods with label %+v", gk, w)
				}
			}
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
