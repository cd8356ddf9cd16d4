package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// userControls are the fields of a binding's spec that users change
// (shepherd rollout, shepherd failover confirm), each under a verb of its
// own; the admission policy shepherd-bindings holds every other field to
// its stored value.
var userControls = map[string]bool{"rolloutControl": true, "gracefulEvictionTasks": true}

// TestBindingPolicyCoversTheSpec: a field added to BindingSpec is one the
// bindings admission policy keeps users from changing, unless it is
// named a user control here (and given its verb in the policy).
func TestBindingPolicyCoversTheSpec(t *testing.T) {
	data, err := Manifests.ReadFile("admission/bindings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Join(strings.Fields(string(data)), " ")
	typ := reflect.TypeFor[workv1alpha1.BindingSpec]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if userControls[name] {
			continue
		}
		want := "object.spec.?" + name + " == oldObject.spec.?" + name
		if name == "resource" {
			want = "object.spec.resource == oldObject.spec.resource"
		}
		if !strings.Contains(policy, want) {
			t.Errorf("spec.%s: the bindings admission policy does not hold it (%q); add it, or make it a user control with a verb of its own", name, want)
		}
	}
}

// TestOverrideOperationsBound: the admission policy's bound on a policy's
// operations is MaxOverrideOperations.
func TestOverrideOperationsBound(t *testing.T) {
	data, err := Manifests.ReadFile("admission/overrides.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("variables.operations <= %d", policyv1alpha1.MaxOverrideOperations)
	if !strings.Contains(string(data), want) {
		t.Errorf("admission/overrides.yaml does not bound the operations with %q", want)
	}
}

// TestChartBindingGuardMatches: the Helm chart's copy of the bindings
// admission policy holds the same fields as config/admission/bindings.yaml
// (the chart adds only its labels).
func TestChartBindingGuardMatches(t *testing.T) {
	want, err := Manifests.ReadFile("admission/bindings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../charts/shepherd/templates/binding-guard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules := func(data []byte) string {
		_, after, _ := strings.Cut(string(data), "validations:")
		var lines []string
		for _, l := range strings.Split(after, "\n") {
			if !strings.Contains(l, "{{") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	if rules(got) != rules(want) {
		t.Errorf("charts/shepherd/templates/binding-guard.yaml's validations differ from config/admission/bindings.yaml's: copy them over")
	}
}
