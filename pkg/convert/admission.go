package convert

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/shepherd-io/shepherd/config/crd"
	"github.com/shepherd-io/shepherd/config/crd/admit"
)

// This file holds each object the converter writes to the CRD of its kind,
// as the hub's API server would admit it (package admit: pruning, defaults,
// the OpenAPI schema, list keys, the CEL rules), from the CRDs built into
// the binary. Shepherd's CRDs bound what Karmada leaves unbounded (at most
// 100 resourceSelectors, a JSONPath's form, ...): an object the hub would
// refuse is reported, with the CRD's message, and not written.

// hubCRDs are Shepherd's CRDs built into the binary, decoded once.
var hubCRDs = sync.OnceValues(crd.CRDs)

// hubValidators caches the validator of each kind the converter writes,
// built on first use and once per process: building one compiles its
// CRD's CEL rules, so a run pays for the kinds it writes, once.
var hubValidators struct {
	sync.Mutex
	byKind map[string]*admit.Validator
}

// hubValidator returns the validator of a kind the converter writes, nil
// for a kind of no CRD.
func hubValidator(kind string) (*admit.Validator, error) {
	hubValidators.Lock()
	defer hubValidators.Unlock()
	if v, ok := hubValidators.byKind[kind]; ok {
		return v, nil
	}
	crds, err := hubCRDs()
	if err != nil {
		return nil, err
	}
	var v *admit.Validator
	for _, c := range crds {
		if k, ok := kinds[kind]; ok && c.Spec.Names.Kind == kind && c.Spec.Group == k.shepherd {
			if v, err = admit.New(c); err != nil {
				return nil, err
			}
		}
	}
	if hubValidators.byKind == nil {
		hubValidators.byKind = map[string]*admit.Validator{}
	}
	hubValidators.byKind[kind] = v
	return v, nil
}

// hubFix is the fix for a refusal the converter knows: an error of the
// CRD at field (its path without list indexes) whose text contains match.
type hubFix struct {
	field, match, fix string
}

// hubFixes are the bounds of Shepherd's CRDs that Karmada does not have
// (or checks only in its webhook), with what to do about each.
var hubFixes = []hubFix{
	{"spec.resourceSelectors", "must have at most", "split the policy: Karmada takes any number of resourceSelectors, the hub at most 100 per policy; write several policies with the same placement, or select the objects by a label"},
	{"spec.failover.application.statePreservation.rules", "should have at least 1 items", "list at least one rule, or remove statePreservation: Karmada accepts an empty list, which preserves nothing"},
	{"spec.failover.cluster.statePreservation.rules", "should have at least 1 items", "list at least one rule, or remove statePreservation: Karmada accepts an empty list, which preserves nothing"},
	{"statePreservation.rules.jsonPath", "should match", "write it as kubectl's JSONPath in braces, read from the copy's status as Karmada reads it: {.checkpoint} or { .jobStatus.id }"},
	{"fieldSelector.matchExpressions", "must be non-empty for In and NotIn", "give In and NotIn at least one value, or write Exists or DoesNotExist; Karmada accepts In and NotIn without values"},
	{"fieldSelector.matchExpressions", "should have at least 1 items", "remove the fieldSelector (without expressions it lets every cluster through) or write an expression"},
	{"metadata.name", "Required value", "give the object a name"},
}

// indexes are the list indexes and map keys of a field path.
var indexes = regexp.MustCompile(`\[[^\]]*\]`)

// knownFix returns the fix for a refusal, "" for none.
func knownFix(e *field.Error) string {
	path := indexes.ReplaceAllString(e.Field, "")
	for _, f := range hubFixes {
		if (path == f.field || strings.HasSuffix(path, "."+f.field)) && strings.Contains(e.Error(), f.match) {
			return f.fix
		}
	}
	return ""
}

// admitted checks the object as the hub would admit it and reports each
// error under hub-refuses; it returns whether the hub admits it. Errors
// at a placeholder of a customization are not reported again: lua-to-cel
// has named them, and the hub refusing them is what they are for.
func (o *object) admitted() bool {
	v, err := hubValidator(o.kind)
	if err != nil {
		o.note("", "hub-refuses", "cannot read Shepherd's CRD of %s built into shepherd: %v", o.kind, err)
		return false
	}
	if v == nil {
		return true
	}
	errs := v.Create(o.obj)
	refused, notChecked := false, false
	for _, e := range errs {
		switch {
		case e.Detail == admit.NotChecked:
			notChecked = true
			continue
		case holdsPlaceholder(o.obj, e.Field):
			continue
		}
		refused = true
		msg := "the hub's " + o.kind + " CRD refuses it: " + e.ErrorBody()
		if fix := knownFix(e); fix != "" {
			msg += "; " + fix
		}
		o.note(e.Field, "hub-refuses", "%s", msg)
	}
	if refused && notChecked {
		o.note("", "hub-refuses", "the hub checks the CRD's CEL rules only once the errors above are fixed: convert again then")
	}
	return !refused
}

// holdsPlaceholder reports whether the value at a field path of obj (as
// field.Path prints it: a.b[0].c, map keys in brackets) is or contains a
// string holding the placeholder. The object as a whole ("") does not
// count: a customization holds placeholders, its other errors are real.
func holdsPlaceholder(obj map[string]any, path string) bool {
	if path == "" {
		return false
	}
	var x any = obj
	for path != "" {
		var step string
		index := path[0] == '['
		if index {
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return false
			}
			step, path = path[1:end], path[end+1:]
		} else {
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			step, path = path[:end], path[end:]
		}
		path = strings.TrimPrefix(path, ".")
		switch c := x.(type) {
		case []any:
			i, err := strconv.Atoi(step)
			if !index || err != nil || i < 0 || i >= len(c) {
				return false
			}
			x = c[i]
		case map[string]any:
			x = c[step]
		default:
			return false
		}
	}
	return containsPlaceholder(x)
}

func containsPlaceholder(x any) bool {
	switch x := x.(type) {
	case string:
		return strings.Contains(x, Placeholder)
	case []any:
		for _, e := range x {
			if containsPlaceholder(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if containsPlaceholder(e) {
				return true
			}
		}
	}
	return false
}
