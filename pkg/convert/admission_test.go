package convert

import (
	"fmt"
	"strings"
	"testing"
)

// selectors renders n resourceSelectors of ConfigMaps.
func selectors(n int) string {
	var b strings.Builder
	b.WriteString("resourceSelectors:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, name: c%d}\n", i)
	}
	return b.String()
}

// appFailover is an application failover (with the propagateDeps Karmada
// asks for) holding the given statePreservation.
func appFailover(statePreservation string) string {
	return "propagateDeps: true\nfailover:\n  application:\n    decisionConditions: {tolerationSeconds: 60}\n    statePreservation: " + statePreservation
}

// TestHubRefuses feeds Karmada objects that Karmada accepts and Shepherd's
// CRDs refuse, one bound each: the object is not written, and the report
// names the file and document, the Shepherd field, the CRD's message and
// the fix.
func TestHubRefuses(t *testing.T) {
	cases := []struct {
		name string
		in   string
		// field is the Shepherd field the refusal names.
		field string
		// message and fix are in the entry's message.
		message, fix string
	}{
		{name: "101 resourceSelectors", in: karmada("PropagationPolicy", selectors(101)),
			field: "spec.resourceSelectors", message: "Too many: 101: must have at most 100 items", fix: "split the policy"},
		{name: "101 resourceSelectors of a ClusterPropagationPolicy", in: strings.Replace(karmada("ClusterPropagationPolicy", selectors(101)), ", namespace: shop", "", 1),
			field: "spec.resourceSelectors", message: "must have at most 100 items", fix: "split the policy"},
		{name: "101 resourceSelectors of an OverridePolicy", in: karmada("OverridePolicy", selectors(101)+"overrideRules:\n- overriders: {labelsOverrider: [{operator: add, value: {a: b}}]}"),
			field: "spec.resourceSelectors", message: "must have at most 100 items", fix: "split the policy"},
		{name: "empty statePreservation rules", in: pp(appFailover("{rules: []}")),
			field: "spec.failover.application.statePreservation.rules", message: "should have at least 1 items", fix: "list at least one rule, or remove statePreservation"},
		{name: "empty statePreservation rules of cluster failover", in: pp("failover:\n  cluster:\n    purgeMode: Gracefully\n    statePreservation: {rules: []}"),
			field: "spec.failover.cluster.statePreservation.rules", message: "should have at least 1 items", fix: "list at least one rule, or remove statePreservation"},
		{name: "In with no values", in: pp("placement:\n  clusterAffinity:\n    fieldSelector:\n      matchExpressions: [{key: region, operator: In}]"),
			field: "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0]", message: "values must be non-empty for In and NotIn", fix: "give In and NotIn at least one value"},
		{name: "NotIn with no values in clusterAffinities", in: pp("placement:\n  clusterAffinities:\n  - affinityName: a\n    fieldSelector:\n      matchExpressions: [{key: zone, operator: NotIn, values: []}]"),
			field: "spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0]", message: "values must be non-empty for In and NotIn", fix: "give In and NotIn at least one value"},
		{name: "jsonPath without braces", in: pp(appFailover("{rules: [{aliasLabelName: example.com/job, jsonPath: .jobStatus.jobID}]}")),
			field: "spec.failover.application.statePreservation.rules[0].jsonPath", message: `should match '^\{\s*\..*\}$'`, fix: "JSONPath in braces"},
		{name: "jsonPath from the root", in: pp(appFailover("{rules: [{aliasLabelName: example.com/job, jsonPath: '{$.status.jobID}'}]}")),
			field: "spec.failover.application.statePreservation.rules[0].jsonPath", message: "should match", fix: "JSONPath in braces"},
		{name: "no name", in: "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {namespace: shop}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n",
			field: "metadata.name", message: "Required value", fix: "give the object a name"},
		{name: "a bound the converter has no fix for", in: pp("placement:\n  clusterTolerations:\n" + strings.Repeat("  - {key: k, operator: Exists}\n", 33)),
			field: "spec.placement.clusterTolerations", message: "must have at most 32 items"},
		{name: "Shepherd's own object", in: strings.Replace(pp("placement:\n  clusterAffinity:\n    fieldSelector:\n      matchExpressions: [{key: region, operator: In}]"), "policy.karmada.io", "policy.shepherd.io", 1),
			field: "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0]", message: "values must be non-empty", fix: "give In and NotIn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A good policy beside it is written: one refusal refuses
			// one object.
			in := strings.Replace(pp(""), "name: p,", "name: good,", 1) + "---\n" + tc.in
			objs, report := convertString(t, in)
			if len(objs) != 1 || objs[0].GetName() != "good" {
				t.Errorf("wrote %d objects, want only the good policy", len(objs))
			}
			if !report.Incomplete() {
				t.Error("the report is complete: shepherd convert would exit 0")
			}
			var found bool
			for _, e := range report.Entries {
				if e.Rule != "hub-refuses" {
					continue
				}
				if e.Action != Refused || e.Source != "in.yaml:8" || e.Name == "good" {
					t.Errorf("entry %+v: want a refusal of the document at in.yaml:8", e)
				}
				if e.Field != tc.field {
					continue
				}
				found = true
				if !strings.Contains(e.Message, tc.message) {
					t.Errorf("message %q lacks the CRD's %q", e.Message, tc.message)
				}
				if tc.fix != "" && !strings.Contains(e.Message, tc.fix) {
					t.Errorf("message %q lacks the fix %q", e.Message, tc.fix)
				}
				if tc.fix == "" && strings.Count(e.Message, "; ") > 0 {
					t.Errorf("message %q has a fix, the case expects none", e.Message)
				}
			}
			if !found {
				t.Errorf("no refusal of %s in %+v", tc.field, report.Entries)
			}
			var b strings.Builder
			if err := report.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "1 object(s) the hub would refuse, not written") ||
				!strings.Contains(b.String(), tc.field+": refused: ") {
				t.Errorf("the text report does not say so:\n%s", b.String())
			}
		})
	}
}

// TestCustomizationPlaceholdersAreNotRefusedTwice: a customization's
// placeholders, which the CRD refuses as it should, are reported once, as
// lua-to-cel, and the customization is written.
func TestCustomizationPlaceholdersAreNotRefusedTwice(t *testing.T) {
	_, objs, report := convertPaths(t, corpus)
	v, err := hubValidator(kindCustomization)
	if err != nil || v == nil {
		t.Fatalf("no validator of customizations: %v", err)
	}
	written, atPlaceholders := 0, 0
	for _, obj := range objs {
		if obj.GetKind() != kindCustomization {
			continue
		}
		written++
		errs := v.Create(obj.Object)
		atPlaceholders += len(errs)
		for _, e := range errs {
			if !holdsPlaceholder(obj.Object, e.Field) {
				t.Errorf("%s: %v is not at a placeholder", obj.GetName(), e)
			}
		}
	}
	if written == 0 || atPlaceholders == 0 {
		t.Fatalf("the corpus writes %d customization(s), which the CRD refuses %d time(s): the test needs some of each", written, atPlaceholders)
	}
	for _, e := range report.Entries {
		if e.Action == Refused {
			t.Errorf("refused: %+v", e)
		}
	}
}

func TestHoldsPlaceholder(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"example.com/a.b": Placeholder + ": x"}},
		"spec": map[string]any{
			"paths": []any{"/spec/replicas", Placeholder},
			"m":     map[string]any{"e": Placeholder},
		},
	}
	for path, want := range map[string]bool{
		"":                                      false,
		"spec.paths[1]":                         true,
		"spec.paths[0]":                         false,
		"spec.paths[2]":                         false,
		"spec.paths":                            true,
		"spec.m":                                true,
		"metadata.annotations[example.com/a.b]": true,
		"spec.none.deeper":                      false,
	} {
		if got := holdsPlaceholder(obj, path); got != want {
			t.Errorf("holdsPlaceholder(%q) = %v, want %v", path, got, want)
		}
	}
}
