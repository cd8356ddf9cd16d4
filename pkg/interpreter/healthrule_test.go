package interpreter

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func configMap(data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

func TestHealthRule(t *testing.T) {
	const stringRule = `has(observedObj.data) && has(observedObj.data.healthy) && observedObj.data.healthy == "false" ? "Unhealthy" : "Healthy"`
	const boolRule = `observedObj.status.readyReplicas >= observedObj.spec.replicas`
	deploy := func(ready, want int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"replicas": want}, "status": map[string]any{"readyReplicas": ready},
		}}
	}
	forty := "[" + strings.Repeat("0,", 39) + "0]"
	cases := []struct {
		name   string
		expr   string
		obj    *unstructured.Unstructured
		want   policyv1alpha1.ResourceHealth
		reason string
	}{
		{"string healthy", stringRule, configMap(map[string]any{"healthy": "true"}), policyv1alpha1.ResourceHealthy, "returned Healthy"},
		{"string unhealthy", stringRule, configMap(map[string]any{"healthy": "false"}), policyv1alpha1.ResourceUnhealthy, "returned Unhealthy"},
		{"no data", stringRule, configMap(nil), policyv1alpha1.ResourceHealthy, "returned Healthy"},
		{"bool true", boolRule, deploy(3, 3), policyv1alpha1.ResourceHealthy, "returned true"},
		{"bool false", boolRule, deploy(1, 3), policyv1alpha1.ResourceUnhealthy, "returned false"},
		{"missing field is Unknown", boolRule, configMap(nil), policyv1alpha1.ResourceUnknown, "CEL evaluation failed"},
		{"explicit Unknown", `"Unknown"`, configMap(nil), policyv1alpha1.ResourceUnknown, "returned Unknown"},
		{"not a health", `observedObj.metadata.name`, configMap(nil), policyv1alpha1.ResourceUnknown, `"x", not Healthy, Unhealthy or Unknown`},
		{"neither a string nor a bool", `observedObj.metadata`, configMap(nil), policyv1alpha1.ResourceUnknown, "not a string or bool"},
		// A rule that builds a map of 40⁴ entries is stopped at the cost
		// limit; the object reads Unknown and the reason names the limit
		// (recorded as the copy's healthReason).
		{"a huge result is Unknown with the reason", forty + ".map(a, " + forty + ".map(b, " + forty + ".map(c, " + forty + ".map(d, a)))).size() > 0",
			configMap(nil), policyv1alpha1.ResourceUnknown, "cost limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rule, err := compileHealthRule(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			got := rule(tc.obj)
			if got.Health != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("got %s (%s), want %s (%s)", got.Health, got.Reason, tc.want, tc.reason)
			}
		})
	}
}

// A health rule is refused when it does not compile, reads the template
// instead of the member object, or cannot return a health; a
// HealthInterpreter's error names its field and the fix.
func TestHealthRuleRefuses(t *testing.T) {
	cases := []struct {
		name, expr string
		want       []string
	}{
		{"a syntax error", `observedObj.status.ready ==`, []string{"does not compile", "Syntax error"}},
		{"an undeclared variable", `unknownVar == 1`, []string{"does not compile", "undeclared reference"}},
		{"the template's variable", `object.status.ready == true`, []string{"does not compile", "reads object", "it must read observedObj"}},
		{"an int", `1 + 2`, []string{"does not compile: the expression returns int; it must return a string (Healthy, Unhealthy, Unknown) or a bool"}},
		{"a list", `[1, 2]`, []string{"must return a string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := CompileHealthInterpreter(&configv1alpha1.HealthInterpreter{Spec: configv1alpha1.HealthInterpreterSpec{
				Target: configv1alpha1.HealthTarget{APIVersion: "v1", Kind: "ConfigMap"},
				Health: configv1alpha1.HealthExpression{Expression: tc.expr}}})
			got := errs.ToAggregate()
			if got == nil {
				t.Fatal("accepted")
			}
			want := append(tc.want, "spec.health.expression", "fix the CEL expression (see docs/failover.md#health-interpreters-in-cel)")
			for _, w := range want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("error %q lacks %q", got, w)
				}
			}
		})
	}
}
