package mcs

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetConditions merges want into have the way meta.SetStatusCondition does
// (a transition time changes only with the status), removes the types in
// owned that want leaves out (a verdict that no longer applies, such as a
// Conflict on an export that became invalid, must not linger), leaves
// every other type alone, and reports whether anything changed. The
// ServiceExport's conditions in a member and an ExportedService's on the
// hub are both written through it.
func SetConditions(have *[]metav1.Condition, want []metav1.Condition, owned []string, now metav1.Time) bool {
	changed := false
	for _, t := range owned {
		if !slices.ContainsFunc(want, func(c metav1.Condition) bool { return c.Type == t }) && meta.RemoveStatusCondition(have, t) {
			changed = true
		}
	}
	for _, c := range want {
		c.LastTransitionTime = now
		if cur := meta.FindStatusCondition(*have, c.Type); cur != nil && cur.Status == c.Status && cur.Reason == c.Reason &&
			cur.Message == c.Message && cur.ObservedGeneration == c.ObservedGeneration {
			continue
		}
		meta.SetStatusCondition(have, c)
		changed = true
	}
	return changed
}
