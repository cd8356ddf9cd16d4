package framework

import "context"

// Score bounds: every score plugin's normalized scores lie in this range, so
// profile weights alone say how much each plugin counts.
const (
	MinClusterScore int64 = 0
	MaxClusterScore int64 = 100
)

// Plugin is the parent of every plugin interface.
type Plugin interface {
	// Name identifies the plugin in profiles, explanations and errors.
	Name() string
}

// PreFilterPlugin computes per-workload state once per cycle, before Filter
// runs on each cluster. Returning Skip tells the framework not to call the
// plugin's Filter in this cycle (the plugin has nothing to check); returning
// Unschedulable rejects every cluster with that status.
//
// A plugin whose verdicts are known for the whole fleet at once (selectors
// compiled to ClusterSets, the clusters with a taint) returns them in the
// PreFilterResult; the framework then applies them with word operations and
// does not call Filter in this cycle (kube-scheduler's PreFilterResult
// narrows the nodes in the same spirit). Filter must still give the same
// answer cluster by cluster: it defines the plugin, tests check it, and
// Verdicts.Filter implements it in one line.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, w *Workload) (*PreFilterResult, *Status)
}

// PreFilterResult is the fleet-wide outcome of a PreFilter.
type PreFilterResult struct {
	// Verdicts replace the calls to Filter when not nil.
	Verdicts Verdicts
}

// FilterPlugin says whether a cluster can take the workload. It is called
// for every cluster, possibly from several goroutines at once, so it must
// only read the CycleState, and should return shared statuses (built in
// PreFilter or at package level) rather than allocate per cluster.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, w *Workload, ci *ClusterInfo) *Status
}

// PreScorePlugin computes per-workload scoring state once per cycle.
// Returning Skip drops the plugin from this cycle's scores: a plugin with
// nothing to say must not add a constant column that only dilutes the others.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, w *Workload) *Status
}

// ScorePlugin ranks a feasible cluster; higher is better. Without
// ScoreExtensions its scores must already lie in MinClusterScore..MaxClusterScore.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, w *Workload, ci *ClusterInfo) (int64, *Status)
	// ScoreExtensions returns the normalizer, or nil.
	ScoreExtensions() ScoreExtensions
}

// ScoreExtensions normalizes a plugin's raw scores, which may depend on the
// other clusters' scores (e.g. relative to the best cluster).
type ScoreExtensions interface {
	// NormalizeScore rewrites the Score fields in place to
	// MinClusterScore..MaxClusterScore, keeping the order of the list.
	NormalizeScore(ctx context.Context, state *CycleState, w *Workload, scores []ClusterScore) *Status
}

// ClusterScore is one cluster's score from one plugin.
type ClusterScore struct {
	// Index of the cluster in the snapshot.
	Index int
	Score int64
}
