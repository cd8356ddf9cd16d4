// Package framework is Shepherd's scheduling framework, modelled on
// kube-scheduler's: small plugin interfaces (PreFilter, Filter, PreScore,
// Score, NormalizeScore), a Status carrying a code and reasons, a Registry of
// plugin factories and a Profile fixing which plugins run in which order.
//
// A scheduling cycle places one Workload against one Snapshot of the fleet:
//
//  1. PreFilter plugins compile per-workload state once (label selectors into
//     cluster bitsets, toleration lists, eviction windows) into the CycleState.
//  2. Filter plugins run over every cluster, in parallel chunks on large
//     fleets; the first failing filter stops a cluster and is recorded.
//  3. PreScore, Score and NormalizeScore plugins rank the feasible clusters
//     (0..100 per plugin), and the weighted totals are combined.
//  4. The feasible clusters become core.Candidates (score, available replicas,
//     static weight, previous placement) for the selection and assignment
//     algorithms of package core.
//
// Everything that depends only on the fleet (label postings, API and taint
// tables, available resources) is computed once per Snapshot, so a cycle
// touches each cluster with bit tests and a few integer operations.
package framework
