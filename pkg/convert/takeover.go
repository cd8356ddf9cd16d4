package convert

import (
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Options change what Convert writes beyond Karmada's meaning.
type Options struct {
	// TakeOverFromKarmada prepares the policies to move a running Karmada
	// fleet: each PropagationPolicy and ClusterPropagationPolicy gets
	// applyStrategy {whenToTakeOver: IfNoDiff, takeOverFrom: Karmada}, so
	// that Shepherd adopts the member objects Karmada wrote that match
	// what it would send (no pod restarts), reports the others, and never
	// touches an object Karmada did not write. conflictResolution:
	// Overwrite, which would write over a differing object, is dropped.
	TakeOverFromKarmada bool
}

// takeOverRules applies Options.TakeOverFromKarmada to one policy.
func takeOverRules(o *object) {
	if o.kind != policyv1alpha1.KindPropagationPolicy && o.kind != policyv1alpha1.KindClusterPropagationPolicy {
		return
	}
	spec := nested(o.obj, "spec")
	if spec == nil {
		return
	}
	if str(spec, "conflictResolution") == string(policyv1alpha1.ConflictOverwrite) {
		delete(spec, "conflictResolution")
		o.note("spec.conflictResolution", "take-over-overwrite",
			"Overwrite would write over member objects that differ from the template; while taking over Karmada's objects only matching ones are adopted: dropped (put it back once the move is done)")
	}
	as, _ := spec["applyStrategy"].(map[string]any)
	if as == nil {
		as = map[string]any{}
		spec["applyStrategy"] = as
	}
	if str(as, "whenToTakeOver") == string(policyv1alpha1.TakeOverIfNoDiff) && str(as, "takeOverFrom") == string(policyv1alpha1.TakeOverFromKarmada) {
		return // converted with the option before
	}
	as["whenToTakeOver"] = string(policyv1alpha1.TakeOverIfNoDiff)
	as["takeOverFrom"] = string(policyv1alpha1.TakeOverFromKarmada)
	o.note("spec.applyStrategy", "take-over-from-karmada",
		"whenToTakeOver: IfNoDiff, takeOverFrom: Karmada: the member objects Karmada wrote are adopted where they match the template, the others reported on their Works, objects Karmada did not write left alone (remove both once the move is done)")
}
