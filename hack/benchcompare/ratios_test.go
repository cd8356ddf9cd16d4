package main

import (
	"strings"
	"testing"
)

// TestTable: each figure's ratio is head/base per pair, summarized by its
// median (a measured pair's, never an average) and spread; a pair whose
// base is 0 gives no ratio.
func TestTable(t *testing.T) {
	pairs := []pair{
		{base: report{AppliedSeconds: 100, BindingsScheduledPerSecond: 10}, head: report{AppliedSeconds: 80, BindingsScheduledPerSecond: 12}},
		{base: report{AppliedSeconds: 100, BindingsScheduledPerSecond: 10}, head: report{AppliedSeconds: 90, BindingsScheduledPerSecond: 11}},
		{base: report{AppliedSeconds: 100, BindingsScheduledPerSecond: 10}, head: report{AppliedSeconds: 70, BindingsScheduledPerSecond: 15}},
		{base: report{AppliedSeconds: 100}, head: report{AppliedSeconds: 75}},
	}
	out := strings.Join(strings.Fields(table(pairs)), " ")
	for _, want := range []string{
		"seconds until every Work is applied 0.75 0.70 0.90 lower",
		"bindings scheduled per second 1.20 1.10 1.50 higher",
		"hub writes per workload - - - lower",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestResolveBaseRefusesUnknownRevision: a base git cannot resolve is
// refused, naming it.
func TestResolveBaseRefusesUnknownRevision(t *testing.T) {
	_, err := resolveBase("no-such-revision-anywhere")
	if err == nil || !strings.Contains(err.Error(), `-base "no-such-revision-anywhere" is not a revision of this repository`) {
		t.Fatalf("got %v", err)
	}
}
