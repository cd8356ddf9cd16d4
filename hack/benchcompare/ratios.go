package main

import (
	"fmt"
	"slices"
	"strings"
)

// report is what benchcompare reads of `shepherd bench e2e -o json`.
type report struct {
	ScheduledSeconds                  float64 `json:"scheduledSeconds"`
	AppliedSeconds                    float64 `json:"appliedSeconds"`
	BindingsScheduledPerSecond        float64 `json:"bindingsScheduledPerSecond"`
	ProcessCPUSecondsPer1000Workloads float64 `json:"processCPUSecondsPer1000Workloads"`
	HubWritesPerWorkload              float64 `json:"hubWritesPerWorkload"`
	StoredBytesTotal                  float64 `json:"storedBytesPerWorkloadTotal"`
	Scheduler                         stage   `json:"scheduler"`
	Execution                         stage   `json:"execution"`
}

type stage struct {
	LatencyP50Seconds float64 `json:"latencyP50Seconds"`
}

type pair struct{ base, head report }

// figures are the rows of the table: name, how to read it, and whether a
// larger value is better (the note says which way is good).
var figures = []struct {
	name   string
	get    func(report) float64
	higher bool
}{
	{"seconds until every binding is Scheduled", func(r report) float64 { return r.ScheduledSeconds }, false},
	{"seconds until every Work is applied", func(r report) float64 { return r.AppliedSeconds }, false},
	{"bindings scheduled per second", func(r report) float64 { return r.BindingsScheduledPerSecond }, true},
	{"scheduler stage latency p50", func(r report) float64 { return r.Scheduler.LatencyP50Seconds }, false},
	{"execution stage latency p50", func(r report) float64 { return r.Execution.LatencyP50Seconds }, false},
	{"process CPU seconds per 1000 workloads", func(r report) float64 { return r.ProcessCPUSecondsPer1000Workloads }, false},
	{"hub writes per workload", func(r report) float64 { return r.HubWritesPerWorkload }, false},
	{"bytes stored per workload", func(r report) float64 { return r.StoredBytesTotal }, false},
}

// ratios are head/base per pair, for one figure; a pair where base is 0
// is left out (no ratio).
func ratios(pairs []pair, get func(report) float64) []float64 {
	var out []float64
	for _, p := range pairs {
		if b := get(p.base); b != 0 {
			out = append(out, get(p.head)/b)
		}
	}
	slices.Sort(out)
	return out
}

// median of sorted values (the lower middle one for an even count: a
// figure that was measured, not an average of two).
func median(sorted []float64) float64 {
	return sorted[(len(sorted)-1)/2]
}

// table prints, per figure, the ratio's median, min and max over the
// pairs, and which way is better.
func table(pairs []pair) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-42s %8s %8s %8s  %s\n", "figure (head/base)", "median", "min", "max", "better")
	for _, f := range figures {
		r := ratios(pairs, f.get)
		better := "lower"
		if f.higher {
			better = "higher"
		}
		if len(r) == 0 {
			fmt.Fprintf(&b, "%-42s %8s %8s %8s  %s\n", f.name, "-", "-", "-", better)
			continue
		}
		fmt.Fprintf(&b, "%-42s %8.2f %8.2f %8.2f  %s\n", f.name, median(r), r[0], r[len(r)-1], better)
	}
	return b.String()
}
