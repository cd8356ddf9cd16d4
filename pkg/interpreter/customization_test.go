package interpreter

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func customization(c configv1alpha1.Customizations) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
		Target: configv1alpha1.HealthTarget{APIVersion: "example.io/v1", Kind: "Rollout"}, Customizations: c}}
}

func rollout(spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Rollout",
		"metadata": map[string]any{"name": "r", "namespace": "ns"}, "spec": spec}}
	return u
}

// Every rule gets bad input and is refused naming its field.
func TestCompileCustomizationRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    configv1alpha1.Customizations
		want []string
	}{
		{"replicas that do not parse", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "object.spec.replicas +", ReplicasPath: "/spec/replicas"}},
			[]string{"spec.customizations.replicas.expression", "does not compile"}},
		{"replicas of the wrong type", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "'three'", ReplicasPath: "/spec/replicas"}},
			[]string{"spec.customizations.replicas.expression", "returns string; it must return int"}},
		{"a replicas path that is no pointer", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "object.spec.replicas", ReplicasPath: "spec.replicas"}},
			[]string{"spec.customizations.replicas.replicasPath", `"spec.replicas" is not a JSON pointer: it must start with /; give a JSON pointer to a field`}},
		{"a replicas path with a bad escape", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "object.spec.replicas", ReplicasPath: "/spec/a~2b"}},
			[]string{"spec.customizations.replicas.replicasPath", `"a~2b" escapes badly (~0 is ~, ~1 is /)`}},
		{"a replicas path with an empty key", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "object.spec.replicas", ReplicasPath: "/spec//replicas"}},
			[]string{"spec.customizations.replicas.replicasPath", "is not a JSON pointer to a field: token 2 is empty"}},
		{"components that do not parse", configv1alpha1.Customizations{Components: &configv1alpha1.ComponentCustomization{
			Expression: "object.spec.parts.map(p,"}},
			[]string{"spec.customizations.components.expression", "does not compile"}},
		{"dependencies that are not a list", configv1alpha1.Customizations{Dependencies: &configv1alpha1.DependencyCustomization{
			Expression: "object.metadata.name == 'x'"}},
			[]string{"spec.customizations.dependencies.expression", "returns bool"}},
		{"a health rule that does not compile", configv1alpha1.Customizations{Health: &configv1alpha1.HealthExpression{
			Expression: "observedObj.status.ready ==="}},
			[]string{"spec.customizations.health.expression", "does not compile"}},
		{"replicas read from the member object", configv1alpha1.Customizations{Replicas: &configv1alpha1.ReplicaCustomization{
			Expression: "observedObj.spec.replicas", ReplicasPath: "/spec/replicas"}},
			[]string{"spec.customizations.replicas.expression", "does not compile", "it must read object (the template)"}},
		{"a health rule over the template", configv1alpha1.Customizations{Health: &configv1alpha1.HealthExpression{
			Expression: "object.status.phase == 'Healthy'"}},
			[]string{"spec.customizations.health.expression", "it must read observedObj (the member object)", "fix the CEL expression over observedObj"}},
		{"a retention path that is no pointer", configv1alpha1.Customizations{Retention: &configv1alpha1.RetentionCustomization{
			Paths: []string{"/spec/replicas", "/"}}},
			[]string{"spec.customizations.retention.paths[1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := CompileCustomization(customization(tc.c))
			if len(errs) == 0 {
				t.Fatal("accepted")
			}
			got := errs.ToAggregate().Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error %q lacks %q", got, w)
				}
			}
		})
	}
	bad := customization(configv1alpha1.Customizations{ObservesGeneration: ptr(true)})
	bad.Spec.Target.APIVersion = "a/b/c"
	if _, errs := CompileCustomization(bad); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.target.apiVersion") {
		t.Errorf("a bad apiVersion: %v", errs)
	}
}

// A compiled customization teaches the interpreter the kind: every
// operation answers from it, and clearing it forgets the kind again.
func TestCustomizationTeachesAKind(t *testing.T) {
	c, errs := CompileCustomization(customization(configv1alpha1.Customizations{
		Replicas: &configv1alpha1.ReplicaCustomization{Expression: "has(object.spec.replicas) ? object.spec.replicas : 1",
			ReplicasPath: "/spec/replicas", PodSpecPath: "/spec/template/spec"},
		StatusAggregation: &configv1alpha1.StatusAggregation{SummedFields: []string{"readyReplicas"}},
		Dependencies: &configv1alpha1.DependencyCustomization{Expression: "has(object.spec.configName) ? " +
			"[{'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': object.spec.configName}] : []"},
		Retention:          &configv1alpha1.RetentionCustomization{Paths: []string{"/spec/paused"}},
		ObservesGeneration: ptr(true),
		Health:             &configv1alpha1.HealthExpression{Expression: "observedObj.status.phase == 'Healthy'"},
	}))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	gk := c.GVK.GroupKind()
	obj := rollout(map[string]any{"replicas": int64(6), "configName": "settings",
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x",
			"resources": map[string]any{"requests": map[string]any{"cpu": "250m"}}}}}}})
	in := New()
	if n, _, _ := in.Replicas(obj); n != 0 {
		t.Fatalf("before the customization: %d replicas", n)
	}
	in.SetCustom(c.GVK, c.Custom)

	n, req, err := in.Replicas(obj)
	if err != nil || n != 6 || req == nil || req.ResourceRequest.Cpu().MilliValue() != 250 {
		t.Errorf("GetReplicas = %d %+v %v", n, req, err)
	}
	out, err := in.ReviseReplicas(obj, []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 4}, {Name: "m2", Replicas: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(out["m2"].Object, "spec", "replicas"); v != 2 {
		t.Errorf("m2's share: %d", v)
	}
	if !in.ObservesGeneration(gk) {
		t.Error("observesGeneration not taken")
	}
	deps, err := in.Dependencies(obj)
	if err != nil || len(deps) != 1 || deps[0].Kind != "ConfigMap" || deps[0].Name != "settings" || deps[0].Namespace != "ns" {
		t.Errorf("GetDependencies = %+v %v", deps, err)
	}
	desired, observed := rollout(map[string]any{"paused": false}), rollout(map[string]any{"paused": true})
	if err := in.Retain(desired, observed); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedBool(desired.Object, "spec", "paused"); !v {
		t.Error("spec.paused not retained")
	}
	member := rollout(nil)
	member.Object["status"] = map[string]any{"phase": "Healthy"}
	if res := in.Health(member); res.Health != "Healthy" {
		t.Errorf("health: %+v", res)
	}
	if got := in.PodSpecPath(gk); strings.Join(got, ".") != "spec.template.spec" {
		t.Errorf("PodSpecPath = %v", got)
	}
	in.ClearCustom(c.GVK)
	if n, _, _ := in.Replicas(obj); n != 0 {
		t.Errorf("after the customization is cleared: %d replicas", n)
	}
	in.SetCustom(c.GVK, c.Custom)
	// Evaluation errors are errors, not numbers.
	if _, _, err := in.Replicas(rollout(map[string]any{"replicas": "six"})); err == nil {
		t.Error("a string replica count gave no error")
	}
}

// TestSensitiveCustomization: a customization's sensitive: true marks its
// kind's values secret; left out or false, the kind keeps its built-in
// answer, and a Secret stays sensitive whatever its customization says.
func TestSensitiveCustomization(t *testing.T) {
	for _, tc := range []struct {
		name             string
		apiVersion, kind string
		sensitive        *bool
		want             bool
	}{
		{"a custom kind marked sensitive", "example.com/v1", "Credential", ptr(true), true},
		{"a custom kind marked not sensitive", "example.com/v1", "Credential", ptr(false), false},
		{"a custom kind left unmarked", "example.com/v1", "Credential", nil, false},
		{"a ConfigMap marked sensitive", "v1", "ConfigMap", ptr(true), true},
		{"a Secret left unmarked", "v1", "Secret", nil, true},
		{"a Secret marked not sensitive", "v1", "Secret", ptr(false), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ric := customization(configv1alpha1.Customizations{Sensitive: tc.sensitive, ObservesGeneration: ptr(false)})
			ric.Spec.Target = configv1alpha1.HealthTarget{APIVersion: tc.apiVersion, Kind: tc.kind}
			c, errs := CompileCustomization(ric)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			in := New()
			in.SetCustom(c.GVK, c.Custom)
			if got := in.Sensitive(c.GVK.GroupKind()); got != tc.want {
				t.Errorf("Sensitive(%v) = %v, want %v", c.GVK.GroupKind(), got, tc.want)
			}
		})
	}
}
