package mcs

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConditionMerge(t *testing.T) {
	then, now := metav1.NewTime(t0), metav1.NewTime(t0.Add(time.Hour))
	ready := func(status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: msg, ObservedGeneration: gen}
	}
	at := func(c metav1.Condition, t metav1.Time) metav1.Condition { c.LastTransitionTime = t; return c }
	for _, tc := range []struct {
		name    string
		have    []metav1.Condition
		want    []metav1.Condition
		changed bool
		// the Ready condition after, with its transition time
		ready metav1.Condition
	}{
		{name: "no change: false, transition time kept",
			have: []metav1.Condition{at(ready("True", "Exported", "m", 1), then)}, want: []metav1.Condition{ready("True", "Exported", "m", 1)},
			ready: at(ready("True", "Exported", "m", 1), then)},
		{name: "a status change: true, new transition time",
			have: []metav1.Condition{at(ready("True", "Exported", "m", 1), then)}, want: []metav1.Condition{ready("False", "Pending", "m", 1)},
			changed: true, ready: at(ready("False", "Pending", "m", 1), now)},
		{name: "a message-only change: true, transition time kept",
			have: []metav1.Condition{at(ready("True", "Exported", "m", 1), then)}, want: []metav1.Condition{ready("True", "Exported", "n", 1)},
			changed: true, ready: at(ready("True", "Exported", "n", 1), then)},
		{name: "a reason-only change: true, transition time kept",
			have: []metav1.Condition{at(ready("False", "Pending", "m", 1), then)}, want: []metav1.Condition{ready("False", "Failed", "m", 1)},
			changed: true, ready: at(ready("False", "Failed", "m", 1), then)},
		{name: "a generation-only change: true, transition time kept",
			have: []metav1.Condition{at(ready("True", "Exported", "m", 1), then)}, want: []metav1.Condition{ready("True", "Exported", "m", 2)},
			changed: true, ready: at(ready("True", "Exported", "m", 2), then)},
		{name: "a new condition: true, added at now",
			want: []metav1.Condition{ready("True", "Exported", "m", 1)}, changed: true, ready: at(ready("True", "Exported", "m", 1), now)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := slices.Clone(tc.have)
			if got := SetConditions(&have, tc.want, nil, now); got != tc.changed {
				t.Errorf("changed = %v, want %v", got, tc.changed)
			}
			c := meta.FindStatusCondition(have, "Ready")
			if c == nil || len(have) != 1 {
				t.Fatalf("conditions %+v, want one Ready", have)
			}
			if c.Status != tc.ready.Status || c.Reason != tc.ready.Reason || c.Message != tc.ready.Message ||
				c.ObservedGeneration != tc.ready.ObservedGeneration || !c.LastTransitionTime.Equal(&tc.ready.LastTransitionTime) {
				t.Errorf("Ready = %+v, want %+v", *c, tc.ready)
			}
		})
	}
	t.Run("conditions neither wanted nor owned are left alone", func(t *testing.T) {
		have := []metav1.Condition{at(ready("True", "Exported", "m", 1), then),
			{Type: "Valid", Status: "True", Reason: "Valid", LastTransitionTime: then, ObservedGeneration: 1}}
		if SetConditions(&have, []metav1.Condition{ready("True", "Exported", "m", 1)}, []string{"Ready", "Conflict"}, now) {
			t.Errorf("changed")
		}
		if meta.FindStatusCondition(have, "Valid") == nil {
			t.Errorf("Valid removed: %+v", have)
		}
	})
	t.Run("an owned condition not wanted any more is removed", func(t *testing.T) {
		have := []metav1.Condition{at(ready("True", "Exported", "m", 1), then),
			{Type: "Conflict", Status: "True", Reason: "PortConflict", LastTransitionTime: then, ObservedGeneration: 1}}
		if !SetConditions(&have, []metav1.Condition{ready("False", "Pending", "m", 1)}, []string{"Ready", "Conflict"}, now) {
			t.Errorf("not changed")
		}
		if c := meta.FindStatusCondition(have, "Conflict"); c != nil {
			t.Errorf("a stale Conflict stays: %+v", have)
		}
	})
}
