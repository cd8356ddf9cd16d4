package crd

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/config/crd/admit"
)

// validator checks custom resources of one CRD as the API server does
// (package admit: pruning, defaults, the OpenAPI schema, list keys, the
// CEL rules).
type validator struct {
	admit *admit.Validator
}

// loadValidator finds the CRD, checks that the API server would accept it
// (which includes the estimated cost of its CEL rules) and builds a validator.
func loadValidator(t *testing.T, name string) *validator {
	t.Helper()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Name != name {
			continue
		}
		if err := admit.CheckCRD(c); err != nil {
			t.Fatalf("the API server would refuse CRD %s: %v", name, err)
		}
		v, err := admit.New(c)
		if err != nil {
			t.Fatal(err)
		}
		return &validator{admit: v}
	}
	t.Fatalf("no CRD %s", name)
	return nil
}

// decode reads a YAML manifest.
func decode(t *testing.T, manifest string) map[string]any {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// validate returns the errors the API server answers a create of manifest with.
func (v *validator) validate(t *testing.T, manifest string) field.ErrorList {
	t.Helper()
	return v.admit.Create(decode(t, manifest))
}

func overridePolicy(spec string) string {
	lines := strings.Split(strings.Trim(spec, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return "apiVersion: policy.shepherd.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: p, namespace: default}\nspec:\n" + strings.Join(lines, "\n") + "\n"
}

// rule wraps overriders in one overrideRules entry.
func rule(overriders string) string {
	return "overrideRules:\n- overriders:\n" + indent(overriders, "    ")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// TestOverridePolicyValidation feeds every rule of the override policy
// schema bad input and checks the message names the field and the fix;
// good policies, Karmada's deprecated form included, pass.
func TestOverridePolicyValidation(t *testing.T) {
	op := loadValidator(t, "overridepolicies.policy.shepherd.io")
	cop := loadValidator(t, "clusteroverridepolicies.policy.shepherd.io")
	cases := []struct {
		name string
		spec string
		want []string // substrings of the errors; none for a valid policy
	}{
		{"every overrider", `resourceSelectors:
- {apiVersion: apps/v1, kind: Deployment, name: web}
overrideRules:
- targetCluster: {clusterNames: [member1]}
  overriders:
    plaintext:
    - {path: /spec/replicas, operator: replace, value: 3}
    - {path: /metadata/labels/tier, operator: remove}
    imageOverrider:
    - {component: Registry, operator: replace, value: registry.example:5000}
    - {predicate: {path: /spec/template/spec/containers/0/image}, component: Tag, operator: remove}
    commandOverrider:
    - {containerName: web, operator: add, value: [--verbose]}
    argsOverrider:
    - {containerName: web, operator: remove, value: [--debug]}
    labelsOverrider:
    - {operator: add, value: {env: prod}}
    annotationsOverrider:
    - {operator: remove, value: {note: ""}}
    fieldOverrider:
    - fieldPath: /data/config.yaml
      yaml:
      - {subPath: /db/port, operator: replace, value: 5432}
`, nil},
		{"deprecated targetCluster and overriders", `targetCluster: {clusterNames: [member1]}
overriders:
  plaintext:
  - {path: /spec/replicas, operator: replace, value: 3}
`, nil},
		{"deprecated pair together with overrideRules", `targetCluster: {clusterNames: [member1]}
overriders:
  plaintext:
  - {path: /spec/replicas, operator: replace, value: 3}
` + rule(`labelsOverrider: [{operator: add, value: {a: b}}]`),
			[]string{"spec.targetCluster and spec.overriders (deprecated) may not be combined with spec.overrideRules", "move them into an entry of spec.overrideRules"}},
		{"deprecated overriders alone together with overrideRules", `overriders:
  labelsOverrider: [{operator: add, value: {a: b}}]
` + rule(`labelsOverrider: [{operator: add, value: {a: b}}]`),
			[]string{"may not be combined with spec.overrideRules"}},
		{"empty rule", "overrideRules:\n- overriders: {plaintext: []}",
			[]string{"spec.overrideRules[0]", "overrideRules[].overriders is empty: add at least one of"}},
		{"plaintext path without a slash", rule(`plaintext: [{path: spec/replicas, operator: replace, value: 3}]`),
			[]string{"spec.overrideRules[0].overriders.plaintext[0].path", "must be a JSON pointer starting with '/'"}},
		{"plaintext on the name", rule(`plaintext: [{path: /metadata/name, operator: replace, value: x}]`),
			[]string{"plaintext[0].path", "may not touch what the object is (/apiVersion, /kind) or which object it is"}},
		// A tenant's template turned into another object: a ConfigMap into
		// a ClusterRoleBinding or a Namespace.
		{"plaintext on the kind", rule(`plaintext: [{path: /kind, operator: replace, value: ClusterRoleBinding}]`),
			[]string{"spec.overrideRules[0].overriders.plaintext[0].path", "may not touch what the object is"}},
		{"plaintext on the apiVersion", rule(`plaintext: [{path: /apiVersion, operator: replace, value: rbac.authorization.k8s.io/v1}]`),
			[]string{"plaintext[0].path", "may not touch what the object is"}},
		{"plaintext below the kind", rule(`plaintext: [{path: /kind/x, operator: add, value: y}]`),
			[]string{"plaintext[0].path", "may not touch"}},
		{"plaintext on the whole metadata", rule(`plaintext: [{path: /metadata, operator: replace, value: {name: x}}]`),
			[]string{"plaintext[0].path", "/metadata as a whole"}},
		{"plaintext on generateName", rule(`plaintext: [{path: /metadata/generateName, operator: add, value: x-}]`),
			[]string{"plaintext[0].path", "may not touch"}},
		{"plaintext on the uid", rule(`plaintext: [{path: /metadata/uid, operator: remove}]`),
			[]string{"plaintext[0].path", "may not touch"}},
		{"plaintext on finalizers", rule(`plaintext: [{path: /metadata/finalizers, operator: add, value: [example.com/hold]}]`),
			[]string{"plaintext[0].path", "may not touch"}},
		{"plaintext on a finalizer", rule(`plaintext: [{path: /metadata/finalizers/0, operator: add, value: example.com/hold}]`),
			[]string{"plaintext[0].path", "may not touch"}},
		{"plaintext on a label named kind", rule(`plaintext: [{path: /metadata/labels/kind, operator: add, value: x}]`), nil},
		{"plaintext on a field named like one", rule(`plaintext: [{path: /spec/kind, operator: add, value: x}]`), nil},
		{"image predicate on the kind", rule(`imageOverrider: [{predicate: {path: /kind}, component: Repository, operator: replace, value: x}]`),
			[]string{"imageOverrider[0].predicate.path", "may not touch what the object is"}},
		{"image predicate on the namespace", rule(`imageOverrider: [{predicate: {path: /metadata/namespace}, component: Repository, operator: replace, value: x}]`),
			[]string{"imageOverrider[0].predicate.path", "may not touch"}},
		{"field overrider on the apiVersion", rule(`fieldOverrider: [{fieldPath: /apiVersion, yaml: [{subPath: /a, operator: remove}]}]`),
			[]string{"fieldOverrider[0].fieldPath", "may not touch what the object is"}},
		{"field overrider on an owner reference", rule(`fieldOverrider: [{fieldPath: /metadata/ownerReferences/0/name, json: [{subPath: /a, operator: remove}]}]`),
			[]string{"fieldOverrider[0].fieldPath", "may not touch"}},
		{"plaintext on the namespace", rule(`plaintext: [{path: /metadata/namespace, operator: replace, value: x}]`),
			[]string{"plaintext[0].path", "Shepherd keeps the object's identity"}},
		{"plaintext on an owner reference", rule(`plaintext: [{path: /metadata/ownerReferences/0, operator: remove}]`),
			[]string{"plaintext[0].path", "ownerReferences"}},
		{"plaintext operator", rule(`plaintext: [{path: /spec/replicas, operator: move, value: 3}]`),
			[]string{"plaintext[0].operator", `Unsupported value: "move"`}},
		{"image value missing", rule(`imageOverrider: [{component: Tag, operator: replace}]`),
			[]string{"imageOverrider[0].value", "value is required unless operator is remove"}},
		{"image component", rule(`imageOverrider: [{component: Digest, operator: remove}]`),
			[]string{"imageOverrider[0].component", `Unsupported value: "Digest"`}},
		{"image predicate path", rule(`imageOverrider: [{predicate: {path: spec/image}, component: Tag, operator: remove}]`),
			[]string{"imageOverrider[0].predicate.path", "must be a JSON pointer starting with '/'"}},
		{"command replace (not in Karmada)", rule(`commandOverrider: [{containerName: web, operator: replace, value: [a]}]`),
			[]string{"commandOverrider[0].operator", `Unsupported value: "replace"`}},
		{"command without a container", rule(`argsOverrider: [{containerName: "", operator: add, value: [a]}]`),
			[]string{"argsOverrider[0].containerName"}},
		{"field overrider with json and yaml", rule(`fieldOverrider:
- fieldPath: /data/x
  json: [{subPath: /a, operator: remove}]
  yaml: [{subPath: /a, operator: remove}]`),
			[]string{"fieldOverrider[0]", "needs exactly one of json and yaml"}},
		{"field overrider with neither", rule(`fieldOverrider: [{fieldPath: /data/x}]`),
			[]string{"fieldOverrider[0]", "needs exactly one of json and yaml"}},
		{"field path", rule(`fieldOverrider: [{fieldPath: data/x, json: [{subPath: /a, operator: remove}]}]`),
			[]string{"fieldOverrider[0].fieldPath", "must be a JSON pointer starting with '/'"}},
		{"json sub path", rule(`fieldOverrider: [{fieldPath: /data/x, json: [{subPath: a, operator: remove}]}]`),
			[]string{"fieldOverrider[0].json[0].subPath", "json[].subPath must be a JSON pointer"}},
		{"yaml sub path", rule(`fieldOverrider: [{fieldPath: /data/x, yaml: [{subPath: a, operator: remove}]}]`),
			[]string{"fieldOverrider[0].yaml[0].subPath", "yaml[].subPath must be a JSON pointer"}},
		{"label operator", rule(`labelsOverrider: [{operator: merge, value: {a: b}}]`),
			[]string{"labelsOverrider[0].operator", `Unsupported value: "merge"`}},
		{"selector with name and labels", `resourceSelectors:
- {apiVersion: v1, kind: ConfigMap, name: x, labelSelector: {matchLabels: {a: b}}}
` + rule(`labelsOverrider: [{operator: add, value: {a: b}}]`),
			[]string{"name and labelSelector are mutually exclusive"}},
		{"target cluster field selector", `overrideRules:
- targetCluster: {fieldSelector: {matchExpressions: [{key: rack, operator: In, values: [a]}]}}
  overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}`,
			[]string{"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].key", `Unsupported value: "rack"`}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			manifest := overridePolicy(tt.spec)
			for _, kv := range []struct {
				kind string
				v    *validator
			}{{"OverridePolicy", op}, {"ClusterOverridePolicy", cop}} {
				kind, v := kv.kind, kv.v
				m := strings.Replace(manifest, "kind: OverridePolicy", "kind: "+kind, 1)
				if kind == "ClusterOverridePolicy" {
					m = strings.Replace(m, ", namespace: default}", "}", 1) // cluster-scoped
				}
				errs := v.validate(t, m)
				if len(tt.want) == 0 {
					if len(errs) > 0 {
						t.Fatalf("%s: want valid, got %v", kind, errs.ToAggregate())
					}
					continue
				}
				if len(errs) == 0 {
					t.Fatalf("%s: want errors containing %q, got none", kind, tt.want)
				}
				msg := errs.ToAggregate().Error()
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: error %q does not contain %q", kind, msg, w)
					}
				}
			}
		})
	}
}

// TestIdentityPathsInEveryRule: each of policyv1alpha1.IdentityPaths (the
// list pkg/overrides enforces when it renders) is refused by the API
// server in every field that takes a path, so the CEL rules and the Go list
// cannot drift apart.
func TestIdentityPathsInEveryRule(t *testing.T) {
	v := loadValidator(t, "overridepolicies.policy.shepherd.io")
	fields := map[string]string{
		"plaintext[0].path":                `plaintext: [{path: %q, operator: remove}]`,
		"imageOverrider[0].predicate.path": `imageOverrider: [{predicate: {path: %q}, component: Tag, operator: remove}]`,
		"fieldOverrider[0].fieldPath":      `fieldOverrider: [{fieldPath: %q, json: [{subPath: /a, operator: remove}]}]`,
	}
	for _, field := range slices.Sorted(maps.Keys(fields)) {
		for _, p := range append(slices.Clone(policyv1alpha1.IdentityPaths), "/metadata") {
			for _, path := range []string{p, p + "/x"} {
				if path == "/metadata/x" {
					continue // an ordinary field below /metadata
				}
				errs := v.validate(t, overridePolicy(rule(fmt.Sprintf(fields[field], path))))
				if !strings.Contains(errs.ToAggregate().Error(), field) {
					t.Errorf("%s %s: want refused on %s, got %v", field, path, field, errs.ToAggregate())
				}
				if !policyv1alpha1.TouchesIdentity(path) {
					t.Errorf("TouchesIdentity(%q) = false, want true", path)
				}
			}
		}
	}
}
