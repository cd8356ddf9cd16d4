package execution

import (
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// verdict is what to do with one manifest's member object.
type verdict string

const (
	// verdictCreate: the member lacks the object; create it.
	verdictCreate verdict = "Create"
	// verdictApply: the Work owns the object; server-side apply it.
	verdictApply verdict = "Apply"
	// verdictInSync: the Work owns the object, sends what it last applied,
	// and every field it sends holds that value in the member: the apply
	// would change nothing, so it is not sent. (Most manifests of a Work
	// are unchanged when one changes: an import Work's ServiceImport and
	// Service beside the EndpointSlice that moved.)
	verdictInSync verdict = "InSync"
	// verdictAdopt: take over an object the Work does not own
	// (conflictResolution: Overwrite, or whenToTakeOver: IfNoDiff and it
	// already matches), then apply it.
	verdictAdopt verdict = "Adopt"
	// verdictHold: the object drifted and whenToApply is IfNotDrifted:
	// leave it as it is.
	verdictHold verdict = "Hold"
	// verdictReport: type ReportDiff: write nothing, report the difference.
	verdictReport verdict = "Report"
	// verdictConflict: an object the Work does not own and may not take.
	verdictConflict verdict = "Conflict"
	// verdictWait: nothing to write in this pass (a pass that only looks
	// for drift); the next apply writes.
	verdictWait verdict = "Wait"
	// verdictOutOfScope: the manifest is outside what the Work's binding
	// names (see scope.go): nothing is read or written for it.
	verdictOutOfScope verdict = "OutOfScope"
)

// applyFacts is what deciding about one manifest needs.
type applyFacts struct {
	// outOfScope: the Work's scope does not permit the manifest. The
	// reconciler checks every manifest of a Work before applying any
	// (checkScope) and applies none when one is outside; the fact is
	// asked again per manifest so that the rule holds here too.
	outOfScope bool
	strategy   *policyv1alpha1.ApplyStrategy
	conflict   policyv1alpha1.ConflictResolution
	// full: this pass applies (the Work changed, the periodic apply is
	// due, or the last one did not succeed); otherwise it only looks for
	// drift after a member object changed.
	full bool
	// exists: the member has the object; owned: its annotation names
	// this Work; owner: that annotation ("" when Shepherd never wrote it).
	exists, owned bool
	owner         string
	// fromKarmada: the object carries the marks of Karmada's execution
	// controller (writtenByKarmada), for applyStrategy.takeOverFrom.
	fromKarmada bool
	// drifted: fields Shepherd applied were changed in the member.
	drifted bool
	// differs: the member object differs from what would be sent (its
	// Shepherd label and annotation aside).
	differs bool
	// unchanged: what would be sent is what was last applied.
	unchanged bool
	// judged: drifted was judged against the member object read just now
	// (an owned object's fields compared, see judgeDrift).
	judged bool
}

// decideApply says what to do with one manifest. Whatever it says, an
// object Shepherd did not create or adopt is never written but by
// verdictAdopt, which the reconciler still checks against an owning Work
// that exists (mayAdopt).
func decideApply(f applyFacts) verdict {
	if f.outOfScope {
		return verdictOutOfScope
	}
	if f.strategy.ReportsDiff() {
		return verdictReport
	}
	if !f.exists {
		// Also between applies: a copy deleted in the member (which also
		// resolves its drift) is put back at once.
		return verdictCreate
	}
	if !f.owned {
		switch {
		case !f.full:
			return verdictWait
		case f.conflict == policyv1alpha1.ConflictOverwrite:
			return verdictAdopt
		case f.takesOverMatching():
			return verdictAdopt
		}
		return verdictConflict
	}
	switch {
	case f.drifted && f.strategy.HoldsDrift():
		return verdictHold
	case f.full && f.unchanged && !f.drifted && f.judged:
		return verdictInSync
	case f.full:
		return verdictApply
	case !f.unchanged && !f.drifted:
		// An update held back earlier (the drift is resolved now).
		return verdictApply
	}
	return verdictWait
}

// takesOverMatching: whenToTakeOver: IfNoDiff takes over an object no Work
// wrote that already matches what would be sent, under any
// conflictResolution (Abort included: there is nothing to overwrite).
func (f applyFacts) takesOverMatching() bool {
	return f.mayTakeOver() && !f.differs
}

// mayTakeOver: whenToTakeOver: IfNoDiff considers taking over this object:
// no Work wrote it and, under takeOverFrom, the system named wrote it.
func (f applyFacts) mayTakeOver() bool {
	if f.owner != "" || !f.strategy.TakesOverIfNoDiff() {
		return false
	}
	switch f.strategy.TakesOverOnlyFrom() {
	case "":
		return true
	case policyv1alpha1.TakeOverFromKarmada:
		return f.fromKarmada
	}
	return false // a source this version does not know takes over nothing
}

// notFromSource: takeOverFrom names a system that did not write this
// object, which no Work wrote either; the conflict then says so.
func (f applyFacts) notFromSource() bool {
	return f.owner == "" && f.strategy.TakesOverIfNoDiff() && f.strategy.TakesOverOnlyFrom() != "" && !f.mayTakeOver()
}

// declinedTakeover: whenToTakeOver: IfNoDiff would have taken over an
// object no Work wrote but for how it differs, which the conflict then
// says.
func (f applyFacts) declinedTakeover() bool {
	return f.mayTakeOver() && f.differs
}
