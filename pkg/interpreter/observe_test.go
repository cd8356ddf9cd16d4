package interpreter

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func TestObserve(t *testing.T) {
	deployment := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "generation": int64(2)},
			"spec":     map[string]any{"replicas": int64(2)},
		}}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	cases := []struct {
		name       string
		obj        *unstructured.Unstructured
		wantStatus string
		wantHealth policyv1alpha1.ResourceHealth
		wantGen    int64
	}{
		{"missing object", nil, "", policyv1alpha1.ResourceUnknown, 0},
		{"no status yet", deployment(nil), "", policyv1alpha1.ResourceUnhealthy, 2},
		{"rolled out", deployment(map[string]any{"observedGeneration": int64(2), "updatedReplicas": int64(2), "availableReplicas": int64(2)}),
			`{"availableReplicas":2,"observedGeneration":2,"updatedReplicas":2}`, policyv1alpha1.ResourceHealthy, 2},
		{"kind without interpreter", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w"}, "status": map[string]any{"ok": true}}}, `{"ok":true}`, policyv1alpha1.ResourceUnknown, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Observe(New(), tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if o.Status != nil {
				got = string(o.Status.Raw)
			}
			if got != tc.wantStatus || o.Health != tc.wantHealth || o.Generation != tc.wantGen {
				t.Errorf("Observe = %q %s %d, want %q %s %d", got, o.Health, o.Generation, tc.wantStatus, tc.wantHealth, tc.wantGen)
			}
		})
	}
}

// TestObserveSaysWhyUnknown: an Unknown health comes with its reason, a
// rule's error included (a CEL rule building a map of 40⁴ entries stops at
// its cost limit), cut to MaxHealthReason; Healthy and Unhealthy carry none.
func TestObserveSaysWhyUnknown(t *testing.T) {
	in := New()
	widget := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}
	huge := "[" + strings.Repeat("0,", 39) + "0].map(a, [" + strings.Repeat("0,", 39) + "0].map(b, [" + strings.Repeat("0,", 39) + "0].map(c, [" + strings.Repeat("0,", 39) + "0].map(d, a))))"
	cases := []struct {
		name       string
		rule       HealthFunc
		wantHealth policyv1alpha1.ResourceHealth
		wantReason string
	}{
		{"a rule past its cost limit", func(*unstructured.Unstructured) HealthResult {
			return HealthResult{Health: policyv1alpha1.ResourceUnknown, Reason: "CEL evaluation failed: operation cancelled: actual cost limit exceeded " + huge}
		}, policyv1alpha1.ResourceUnknown, "CEL evaluation failed: operation cancelled: actual cost limit exceeded"},
		{"healthy", func(*unstructured.Unstructured) HealthResult {
			return HealthResult{Health: policyv1alpha1.ResourceHealthy, Reason: "CEL expression returned true"}
		}, policyv1alpha1.ResourceHealthy, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in.SetHealthRule(widget, tc.rule)
			o, err := Observe(in, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}})
			if err != nil {
				t.Fatal(err)
			}
			if o.Health != tc.wantHealth || !strings.HasPrefix(o.HealthReason, tc.wantReason) || len(o.HealthReason) > MaxHealthReason || (tc.wantReason == "") != (o.HealthReason == "") {
				t.Fatalf("Observe = %s %q, want %s with a reason starting %q, at most %d bytes", o.Health, o.HealthReason, tc.wantHealth, tc.wantReason, MaxHealthReason)
			}
		})
	}
}
