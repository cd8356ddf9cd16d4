package customization

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
)

// The objects that hold CEL rules (HealthInterpreters,
// ResourceInterpreterCustomizations) target a kind each, and several may
// target one kind. Elect decides, the same way for both, which one serves
// each kind: the first by name among those that compiled and are not being
// deleted. The others are told why not.

// Candidate is one object, as Elect sees it.
type Candidate struct {
	Name       string
	Generation int64
	Kind       schema.GroupVersionKind
	Compiled   bool
	Deleting   bool
}

// InUse is the object, at a generation, serving a kind.
type InUse struct {
	Name       string
	Generation int64
}

// Words are how an object kind's messages read.
type Words struct {
	// Object is the object kind, e.g. "HealthInterpreter".
	Object string
	// NotCompiled is the message of an object that did not compile.
	NotCompiled string
	// Serves prefixes the kind in the message of the object in use, e.g.
	// "judges the health of".
	Serves string
}

// Verdict is Elect's answer for one candidate.
type Verdict struct {
	Active          bool
	Reason, Message string
	// Apply: the candidate serves its kind and was not serving it at this
	// generation before; the caller installs its rule.
	Apply bool
}

// Election is the outcome for every candidate and kind.
type Election struct {
	// Verdicts, in the order of the candidates given.
	Verdicts []Verdict
	// Winners is what serves each kind now; the caller keeps it as the
	// applied set of the next election.
	Winners map[schema.GroupVersionKind]InUse
	// Removed are the kinds served before and by nothing now, sorted; the
	// caller removes their rules.
	Removed []schema.GroupVersionKind
}

// Elect decides which candidate serves each kind, given what was applied.
func Elect(w Words, cands []Candidate, applied map[schema.GroupVersionKind]InUse) Election {
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cands[a].Name, cands[b].Name) })
	e := Election{Verdicts: make([]Verdict, len(cands)), Winners: map[schema.GroupVersionKind]InUse{}}
	for _, i := range order {
		c := cands[i]
		v := Verdict{Reason: configv1alpha1.ReasonCompileError, Message: w.NotCompiled}
		switch winner, taken := e.Winners[c.Kind]; {
		case !c.Compiled:
		case c.Deleting:
			v.Reason, v.Message = configv1alpha1.ReasonDeleting, "the object is being deleted"
		case taken:
			v.Reason, v.Message = configv1alpha1.ReasonSuperseded, w.Object+" "+winner.Name+" sorts first for "+c.Kind.String()
		default:
			now := InUse{Name: c.Name, Generation: c.Generation}
			e.Winners[c.Kind] = now
			v = Verdict{Active: true, Reason: configv1alpha1.ReasonInUse, Message: w.Serves + " " + c.Kind.String(), Apply: applied[c.Kind] != now}
		}
		e.Verdicts[i] = v
	}
	for k := range applied {
		if _, ok := e.Winners[k]; !ok {
			e.Removed = append(e.Removed, k)
		}
	}
	slices.SortFunc(e.Removed, func(a, b schema.GroupVersionKind) int { return cmp.Compare(a.String(), b.String()) })
	return e
}
