package convert

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// This file converts OverridePolicy and ClusterOverridePolicy: the rows of
// docs/overrides.md's "Coming from Karmada" table.

func init() {
	register(policyv1alpha1.KindOverridePolicy, kind{
		karmada: KarmadaPolicyGroup, shepherd: ShepherdPolicyGroup, namespaced: true,
		typ:    reflect.TypeFor[policyv1alpha1.OverridePolicy](),
		decode: decoder[policyv1alpha1.OverridePolicy](),
		rules:  overrideRules,
	})
	register(policyv1alpha1.KindClusterOverridePolicy, kind{
		karmada: KarmadaPolicyGroup, shepherd: ShepherdPolicyGroup,
		typ:    reflect.TypeFor[policyv1alpha1.ClusterOverridePolicy](),
		decode: decoder[policyv1alpha1.ClusterOverridePolicy](),
		rules:  overrideRules,
	})
}

// overriderLists are the lists of an overriders object.
var overriderLists = []string{"plaintext", "imageOverrider", "commandOverrider", "argsOverrider",
	"labelsOverrider", "annotationsOverrider", "fieldOverrider"}

// identityPaths are the paths Shepherd refuses to override (the CEL rules
// of override_types.go): what the object is and which object it is.
var identityPaths = []string{"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/generateName",
	"/metadata/uid", "/metadata/resourceVersion", "/metadata/ownerReferences", "/metadata/finalizers"}

func overrideRules(o *object) {
	spec := nested(o.obj, "spec")
	if spec == nil {
		return
	}
	selectorRules(o, spec, false)
	rules, hasRules := spec["overrideRules"].([]any)
	if hasRules && (spec["targetCluster"] != nil || !emptyOverriders(nested(spec, "overriders"))) {
		o.note("spec.overrideRules", "deprecated-overriders",
			"Karmada refuses overrideRules beside the deprecated targetCluster or overriders as well: move them into an entry of overrideRules")
		return
	}
	kept := rules[:0]
	for i, r := range rules {
		m, _ := r.(map[string]any)
		path := fmt.Sprintf("spec.overrideRules[%d]", i)
		if m != nil && emptyOverriders(nested(m, "overriders")) {
			o.note(path, "empty-override-rule", "overrides nothing: Karmada does nothing with it, Shepherd refuses it: dropped")
			continue
		}
		identityRules(o, nested(m, "overriders"), path+".overriders")
		kept = append(kept, r)
	}
	if hasRules {
		spec["overrideRules"] = kept
	}
	identityRules(o, nested(spec, "overriders"), "spec.overriders")
}

func emptyOverriders(ov map[string]any) bool {
	return !slices.ContainsFunc(overriderLists, func(k string) bool { return len(list(ov, k)) > 0 })
}

// identityRules finds the overrides of an object's identity, which Karmada
// allows (but for the name and namespace) and Shepherd refuses.
func identityRules(o *object, ov map[string]any, path string) {
	check := func(field, p string) {
		if p == "/metadata" || slices.ContainsFunc(identityPaths, func(id string) bool { return p == id || strings.HasPrefix(p, id+"/") }) {
			o.note(path+"."+field, "override-identity-path",
				"overrides %s: Shepherd keeps what the object is and which object it is as the template has them and refuses this path; remove the operation", p)
		}
	}
	for i, e := range list(ov, "plaintext") {
		m, _ := e.(map[string]any)
		check(fmt.Sprintf("plaintext[%d].path", i), str(m, "path"))
	}
	for i, e := range list(ov, "fieldOverrider") {
		m, _ := e.(map[string]any)
		check(fmt.Sprintf("fieldOverrider[%d].fieldPath", i), str(m, "fieldPath"))
	}
	for i, e := range list(ov, "imageOverrider") {
		m, _ := e.(map[string]any)
		if pred := nested(m, "predicate"); pred != nil {
			check(fmt.Sprintf("imageOverrider[%d].predicate.path", i), str(pred, "path"))
		}
	}
}
