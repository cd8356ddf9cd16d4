package interpreter

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

func TestPodSelector(t *testing.T) {
	obj := func(apiVersion, kind string, selector any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}}
		if selector != nil {
			u.Object["spec"] = map[string]any{"selector": selector}
		}
		return u
	}
	match := map[string]any{"matchLabels": map[string]any{"app": "web"}}
	for _, tc := range []struct {
		name  string
		obj   *unstructured.Unstructured
		ok    bool
		match bool
	}{
		{"deployment", obj("apps/v1", "Deployment", match), true, true},
		{"statefulset", obj("apps/v1", "StatefulSet", match), true, true},
		{"replicaset expressions", obj("apps/v1", "ReplicaSet", map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "In", "values": []any{"web"}}}}), true, true},
		{"no selector", obj("apps/v1", "Deployment", nil), false, false},
		{"empty selector selects nothing here", obj("apps/v1", "Deployment", map[string]any{}), false, false},
		{"malformed", obj("apps/v1", "Deployment", map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Bogus"}}}), false, false},
		{"other kind", obj("v1", "ConfigMap", match), false, false},
		{"daemonset not counted", obj("apps/v1", "DaemonSet", match), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, ok := New().PodSelector(tc.obj)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && sel.Matches(labels.Set{"app": "web"}) != tc.match {
				t.Fatalf("selector %s: match = %v", sel, !tc.match)
			}
		})
	}
}
