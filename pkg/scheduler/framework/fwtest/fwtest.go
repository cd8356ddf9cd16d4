// Package fwtest helps plugin tests run one plugin the way the framework
// does (PreFilter then Filter per cluster; PreScore, Score, NormalizeScore)
// without building a profile.
package fwtest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Snapshot indexes clusters or fails the test.
func Snapshot(t testing.TB, clusters ...framework.ClusterInfo) *framework.Snapshot {
	t.Helper()
	snap, err := framework.NewSnapshot(clusters)
	if err != nil {
		t.Fatalf("NewSnapshot: %v", err)
	}
	return snap
}

// Filter runs p over every cluster of snap under the workload's first
// affinity term and returns each cluster's status by name (nil when it
// passes). A PreFilter Skip leaves every cluster passing.
func Filter(t testing.TB, p framework.FilterPlugin, snap *framework.Snapshot, w *framework.Workload) map[string]*framework.Status {
	t.Helper()
	return FilterTerm(t, p, snap, w, framework.AffinityTerms(w.Placement)[0])
}

// FilterTerm is Filter under a given affinity term. It runs the plugin both
// ways, PreFilter then Filter cluster by cluster, and inside a framework
// (where PreFilter verdicts replace Filter), and fails the test when the
// two disagree on any cluster.
func FilterTerm(t testing.TB, p framework.FilterPlugin, snap *framework.Snapshot, w *framework.Workload, term framework.AffinityTerm) map[string]*framework.Status {
	t.Helper()
	out := filterByCluster(t, p, snap, w, term)
	fw, err := framework.New(framework.Registry{p.Name(): func(json.RawMessage) (framework.Plugin, error) { return p, nil }},
		framework.Profile{Name: "fwtest", Filters: []string{p.Name()}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := fw.Run(context.Background(), snap, w, term)
	if err != nil {
		t.Fatalf("framework: %v", err)
	}
	defer c.Release()
	for i, rej := range c.Rejections {
		name := snap.At(i).Name
		if got, want := rej.Status.Message(), out[name].Message(); got != want || rej.Status.Code() != out[name].Code() {
			t.Errorf("cluster %s: the framework says %q, Filter says %q", name, got, want)
		}
	}
	return out
}

func filterByCluster(t testing.TB, p framework.FilterPlugin, snap *framework.Snapshot, w *framework.Workload, term framework.AffinityTerm) map[string]*framework.Status {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState(snap, w, term)
	out := make(map[string]*framework.Status, snap.Len())
	if pre, ok := p.(framework.PreFilterPlugin); ok {
		_, st := pre.PreFilter(ctx, state, w)
		switch st.Code() {
		case framework.Skip:
			for i := 0; i < snap.Len(); i++ {
				out[snap.At(i).Name] = nil
			}
			return out
		case framework.Success:
		case framework.Unschedulable:
			for i := 0; i < snap.Len(); i++ {
				out[snap.At(i).Name] = st
			}
			return out
		default:
			t.Fatalf("PreFilter: %v", st.AsError())
		}
	}
	for i := 0; i < snap.Len(); i++ {
		ci := snap.At(i)
		st := p.Filter(ctx, state, w, ci)
		if st.Code() == framework.Error {
			t.Fatalf("Filter(%s): %v", ci.Name, st.AsError())
		}
		if !st.IsSuccess() {
			out[ci.Name] = st
		} else {
			out[ci.Name] = nil
		}
	}
	return out
}

// Passing returns the names of the clusters a Filter result lets through,
// in snapshot order.
func Passing(snap *framework.Snapshot, res map[string]*framework.Status) []string {
	var names []string
	for i := 0; i < snap.Len(); i++ {
		if n := snap.At(i).Name; res[n] == nil {
			names = append(names, n)
		}
	}
	return names
}

// Score runs p over every cluster of snap (all taken as feasible) and
// returns the normalized scores by name; skipped is true when PreScore
// returned Skip.
func Score(t testing.TB, p framework.ScorePlugin, snap *framework.Snapshot, w *framework.Workload) (scores map[string]int64, skipped bool) {
	t.Helper()
	ctx := context.Background()
	state := framework.NewCycleState(snap, w, framework.AffinityTerms(w.Placement)[0])
	if pre, ok := p.(framework.PreScorePlugin); ok {
		st := pre.PreScore(ctx, state, w)
		if st.IsSkip() {
			return nil, true
		}
		if !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st.AsError())
		}
	}
	list := make([]framework.ClusterScore, snap.Len())
	for i := range list {
		s, st := p.Score(ctx, state, w, snap.At(i))
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", snap.At(i).Name, st.AsError())
		}
		list[i] = framework.ClusterScore{Index: i, Score: s}
	}
	if ext := p.ScoreExtensions(); ext != nil {
		if st := ext.NormalizeScore(ctx, state, w, list); !st.IsSuccess() {
			t.Fatalf("NormalizeScore: %v", st.AsError())
		}
	}
	scores = make(map[string]int64, len(list))
	for _, cs := range list {
		if cs.Score < framework.MinClusterScore || cs.Score > framework.MaxClusterScore {
			t.Fatalf("cluster %s scored %d, outside 0..100", snap.At(cs.Index).Name, cs.Score)
		}
		scores[snap.At(cs.Index).Name] = cs.Score
	}
	return scores, false
}
