package expr

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func configMap(data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

func TestInterpret(t *testing.T) {
	const stringRule = `has(observedObj.data) && has(observedObj.data.healthy) && observedObj.data.healthy == "false" ? "Unhealthy" : "Healthy"`
	const boolRule = `observedObj.status.readyReplicas >= observedObj.spec.replicas`
	deploy := func(ready, want int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"replicas": want}, "status": map[string]any{"readyReplicas": ready},
		}}
	}
	cases := []struct {
		name string
		expr string
		obj  *unstructured.Unstructured
		want policyv1alpha1.ResourceHealth
	}{
		{"string healthy", stringRule, configMap(map[string]any{"healthy": "true"}), policyv1alpha1.ResourceHealthy},
		{"string unhealthy", stringRule, configMap(map[string]any{"healthy": "false"}), policyv1alpha1.ResourceUnhealthy},
		{"no data", stringRule, configMap(nil), policyv1alpha1.ResourceHealthy},
		{"bool true", boolRule, deploy(3, 3), policyv1alpha1.ResourceHealthy},
		{"bool false", boolRule, deploy(1, 3), policyv1alpha1.ResourceUnhealthy},
		{"missing field is Unknown", boolRule, configMap(nil), policyv1alpha1.ResourceUnknown},
		{"explicit Unknown", `"Unknown"`, configMap(nil), policyv1alpha1.ResourceUnknown},
		{"not a health", `observedObj.metadata.name`, configMap(nil), policyv1alpha1.ResourceUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, err := Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := i.Interpret(tc.obj)
			if got.Health != tc.want || got.Reason == "" {
				t.Errorf("got %s (%s), want %s", got.Health, got.Reason, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := map[string]string{
		`observedObj.status.ready ==`: "Syntax error",
		`unknownVar == 1`:             "undeclared reference",
		`1 + 2`:                       "must return a string",
		`[1, 2]`:                      "must return a string",
	}
	for expr, want := range cases {
		_, err := Compile(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want an error containing %q", expr, err, want)
		}
	}
}

// TestHugeResultIsUnknownWithTheReason: a rule that builds a map of 40⁴
// entries is stopped at the cost limit; the object reads Unknown and the
// reason names the limit (recorded as the copy's healthReason).
func TestHugeResultIsUnknownWithTheReason(t *testing.T) {
	forty := "[" + strings.Repeat("0,", 39) + "0]"
	i, err := Compile(forty + ".map(a, " + forty + ".map(b, " + forty + ".map(c, " + forty + ".map(d, a)))).size() > 0")
	if err != nil {
		t.Fatal(err)
	}
	got := i.Interpret(configMap(nil))
	if got.Health != policyv1alpha1.ResourceUnknown || !strings.Contains(got.Reason, "cost limit") {
		t.Fatalf("got %s (%s), want Unknown naming the cost limit", got.Health, got.Reason)
	}
}
