package framework_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestSnapshotFromClusters(t *testing.T) {
	now := metav1.Now()
	q := resource.MustParse
	clusters := []clusterv1alpha1.Cluster{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"env": "prod"}},
			Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "r", Zone: "z"},
			Status: clusterv1alpha1.ClusterStatus{
				Conditions:     []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}},
				APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "services", Kind: "Service"}}}},
				ResourceSummary: &clusterv1alpha1.ResourceSummary{
					Allocatable: corev1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "pods": q("110"), "nvidia.com/gpu": q("4")},
					Allocated:   corev1.ResourceList{"cpu": q("1500m"), "memory": q("1Gi"), "pods": q("10"), "nvidia.com/gpu": q("1")},
					Allocating:  corev1.ResourceList{"cpu": q("3"), "pods": q("5")},
				},
			},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "a", DeletionTimestamp: &now}},
	}
	snap, err := framework.SnapshotFromClusters(clusters)
	if err != nil {
		t.Fatal(err)
	}
	a, b := snap.At(0), snap.At(1)
	if a.Name != "a" || !a.Deleting || a.Probed || a.Index() != 0 {
		t.Errorf("a: %+v", a)
	}
	want := framework.Resources{MilliCPU: 0, Memory: 7 << 30, Pods: 95, Scalars: []framework.ScalarResource{{Name: "nvidia.com/gpu", Value: 3}}}
	if b.Name != "b" || b.Index() != 1 || !b.Probed || b.Ready != metav1.ConditionFalse || !reflect.DeepEqual(b.Available, want) ||
		!reflect.DeepEqual(b.APIs, []string{"v1/Service"}) || b.Field("region") != "r" {
		t.Errorf("b: %+v", b)
	}
	id, ok := snap.APIID("v1/Service")
	if !ok || !b.HasAPI(id) || a.HasAPI(id) {
		t.Error("API lookup")
	}
	if _, ok := snap.APIID("apps/v1/Deployment"); ok {
		t.Error("no cluster serves Deployments")
	}
	if i, ok := snap.Index("b"); !ok || i != 1 {
		t.Error("Index")
	}
}

func TestSnapshotErrors(t *testing.T) {
	if _, err := framework.NewSnapshot([]framework.ClusterInfo{{Name: "a"}, {Name: "a"}}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := framework.NewSnapshot([]framework.ClusterInfo{{}}); err == nil {
		t.Error("a cluster without a name must be refused")
	}
}

func TestFit(t *testing.T) {
	avail := framework.Resources{MilliCPU: 4000, Memory: 8 << 30, Pods: 10, Scalars: []framework.ScalarResource{{Name: "a.io/x", Value: 5}, {Name: "b.io/y", Value: 3}}}
	tests := []struct {
		name     string
		req      framework.Resources
		n        int64
		limiting corev1.ResourceName
	}{
		{"nothing requested", framework.Resources{}, core.Unlimited, ""},
		{"cpu", framework.Resources{MilliCPU: 1500}, 2, "cpu"},
		{"memory", framework.Resources{MilliCPU: 100, Memory: 3 << 30}, 2, "memory"},
		{"pods", framework.Resources{MilliCPU: 1}, 10, "pods"},
		{"scalar", framework.Resources{MilliCPU: 1, Scalars: []framework.ScalarResource{{Name: "b.io/y", Value: 2}}}, 1, "b.io/y"},
		{"unreported scalar", framework.Resources{MilliCPU: 1, Scalars: []framework.ScalarResource{{Name: "c.io/z", Value: 1}}}, 0, "c.io/z"},
	}
	for _, tt := range tests {
		n, lim := avail.Fit(&tt.req)
		if n != tt.n || lim != tt.limiting {
			t.Errorf("%s: got %d (%s), want %d (%s)", tt.name, n, lim, tt.n, tt.limiting)
		}
	}
}

// TestFitNodeByNode: with a node model, a replica never spans nodes. Six
// nodes of 1.5 free CPUs sum to 9 CPUs but take six one-CPU replicas; a
// malformed model is not trusted.
func TestFitNodeByNode(t *testing.T) {
	q := resource.MustParse
	frag := []clusterv1alpha1.NodeGroup{{Count: 6, Free: corev1.ResourceList{"cpu": q("1500m"), "memory": q("8Gi"), "pods": q("110")}}}
	cluster := func(nodes []clusterv1alpha1.NodeGroup) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{"cpu": q("9"), "memory": q("48Gi"), "pods": q("660")},
			Nodes:       nodes,
		}}}
	}
	tests := []struct {
		name     string
		nodes    []clusterv1alpha1.NodeGroup
		req      framework.Resources
		n        int64
		limiting corev1.ResourceName
	}{
		{"no model: the sums", nil, framework.Resources{MilliCPU: 1000}, 9, "cpu"},
		{"fragmented: one replica per node", frag, framework.Resources{MilliCPU: 1000}, 6, framework.ResourceNodeRoom},
		{"small replicas: the sums limit first", frag, framework.Resources{MilliCPU: 500}, 18, "cpu"},
		{"too big for any node", frag, framework.Resources{MilliCPU: 2000}, 0, framework.ResourceNodeRoom},
		{"nothing requested", frag, framework.Resources{}, core.Unlimited, ""},
		{"two pools", []clusterv1alpha1.NodeGroup{frag[0], {Count: 1, Free: corev1.ResourceList{"cpu": q("3"), "memory": q("8Gi"), "pods": q("2")}}},
			framework.Resources{MilliCPU: 1000}, 8, framework.ResourceNodeRoom},
		{"malformed (a group of no nodes): not trusted", []clusterv1alpha1.NodeGroup{{Count: 0, Free: corev1.ResourceList{"cpu": q("1")}}},
			framework.Resources{MilliCPU: 1000}, 9, "cpu"},
		{"malformed (too many groups): not trusted", slices.Repeat(frag, clusterv1alpha1.MaxNodeGroups+1),
			framework.Resources{MilliCPU: 1000}, 9, "cpu"},
	}
	for _, tt := range tests {
		ci := framework.ClusterInfoFromCluster(cluster(tt.nodes))
		n, lim := ci.Fit(&tt.req)
		if n != tt.n || lim != tt.limiting {
			t.Errorf("%s: got %d (%s), want %d (%s)", tt.name, n, lim, tt.n, tt.limiting)
		}
	}
}

func TestClusterSet(t *testing.T) {
	snap := fwtest.Snapshot(t, manyClusters(130)...)
	state := framework.NewCycleState(snap, &framework.Workload{}, framework.AffinityTerm{})
	all := state.AllClusters()
	if all.Count() != 130 {
		t.Fatalf("AllClusters has %d", all.Count())
	}
	s := state.NewClusterSet()
	s.Add(3)
	s.Add(64)
	s.Add(129)
	var got []int
	s.ForEach(0, 130, func(i int) { got = append(got, i) })
	if !reflect.DeepEqual(got, []int{3, 64, 129}) {
		t.Errorf("ForEach: %v", got)
	}
	s.Invert(130)
	if s.Count() != 127 || s.Has(64) || !s.Has(65) {
		t.Errorf("Invert: %d members", s.Count())
	}
	s.AndNot(all)
	if !s.IsEmpty() {
		t.Error("AndNot all must empty the set")
	}
}

func manyClusters(n int) []framework.ClusterInfo {
	out := make([]framework.ClusterInfo, n)
	for i := range out {
		out[i] = framework.ClusterInfo{Name: fmt.Sprintf("c%04d", i), Labels: map[string]string{"parity": fmt.Sprint(i % 2)}}
	}
	return out
}

func TestStatus(t *testing.T) {
	var nilStatus *framework.Status
	if !nilStatus.IsSuccess() || nilStatus.Code() != framework.Success || nilStatus.AsError() != nil || nilStatus.Message() != "" {
		t.Error("a nil status is Success")
	}
	st := framework.NewStatus(framework.Unschedulable, "a", "b")
	if !st.IsRejected() || st.Message() != "a, b" || st.AsError().Error() != "a, b" {
		t.Errorf("status: %v", st.AsError())
	}
	if p := st.WithPlugin("P"); p.Plugin() != "P" || st.Plugin() != "" || p.AsError().Error() != "P: a, b" {
		t.Error("WithPlugin must copy")
	}
	err := fmt.Errorf("boom")
	if e := framework.AsStatus(err); e.Code() != framework.Error || e.AsError() != err || framework.AsStatus(nil) != nil {
		t.Error("AsStatus")
	}
	if framework.NewStatus(framework.Skip).AsError() != nil || framework.Code(42).String() != "Unknown" || framework.Skip.String() != "Skip" {
		t.Error("Skip")
	}
}

func TestProfileAndRegistry(t *testing.T) {
	p := framework.Profile{Name: "p", Filters: []string{"A", "B"}, Scores: []framework.WeightedPlugin{{Name: "S", Weight: 1}, {Name: "B", Weight: 1}}}
	d := p.Disable("B")
	if !reflect.DeepEqual(d.Filters, []string{"A"}) || len(d.Scores) != 1 || len(p.Filters) != 2 {
		t.Errorf("Disable: %+v (original %+v)", d, p)
	}
	w := p.WithFilter("C").WithScore("T", 3)
	if len(w.Filters) != 3 || w.Scores[2] != (framework.WeightedPlugin{Name: "T", Weight: 3}) || len(p.Filters) != 2 {
		t.Errorf("With: %+v", w)
	}
	r := framework.NewRegistry()
	if err := r.Register("A", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Merge(framework.Registry{"A": nil}); err == nil {
		t.Error("merging a registered name must fail")
	}
}

// fakePlugin filters or scores by a function of the cluster index.
type fakePlugin struct {
	name   string
	filter func(i int) *framework.Status
	score  func(i int) int64
	pre    *framework.Status
}

func (p *fakePlugin) Name() string { return p.name }
func (p *fakePlugin) PreFilter(context.Context, *framework.CycleState, *framework.Workload) (*framework.PreFilterResult, *framework.Status) {
	return nil, p.pre
}
func (p *fakePlugin) Filter(_ context.Context, _ *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	return p.filter(ci.Index())
}
func (p *fakePlugin) Score(_ context.Context, _ *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) (int64, *framework.Status) {
	return p.score(ci.Index()), nil
}
func (p *fakePlugin) ScoreExtensions() framework.ScoreExtensions { return nil }

func run(t *testing.T, snap *framework.Snapshot, plugins ...*fakePlugin) (*framework.Cycle, error) {
	t.Helper()
	reg := framework.Registry{}
	prof := framework.Profile{Name: "test"}
	for _, p := range plugins {
		reg[p.name] = func(json.RawMessage) (framework.Plugin, error) { return p, nil }
		if p.filter != nil {
			prof.Filters = append(prof.Filters, p.name)
		}
		if p.score != nil {
			prof.Scores = append(prof.Scores, framework.WeightedPlugin{Name: p.name, Weight: 2})
		}
	}
	fw, err := framework.New(reg, prof)
	if err != nil {
		t.Fatal(err)
	}
	return fw.Run(context.Background(), snap, &framework.Workload{Previous: []workv1alpha1.TargetCluster{{Name: "c0003", Replicas: 7}}}, framework.AffinityTerm{})
}

func TestRunParallelAndOrdered(t *testing.T) {
	clusters := manyClusters(1000)
	clusters[5].Deleting = true
	snap := fwtest.Snapshot(t, clusters...)
	odd := framework.NewStatus(framework.Unschedulable, "odd")
	third := framework.NewStatus(framework.Unschedulable, "third")
	c, err := run(t, snap,
		&fakePlugin{name: "Odd", filter: func(i int) *framework.Status {
			if i%2 == 1 {
				return odd
			}
			return nil
		}},
		&fakePlugin{name: "Third", filter: func(i int) *framework.Status {
			if i%3 == 0 {
				return third
			}
			return nil
		}},
		&fakePlugin{name: "Score", score: func(i int) int64 { return int64(i % 101) }},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	for i, rej := range c.Rejections {
		var want string
		switch {
		case i == 5:
			want = "cluster is being deleted"
		case i%2 == 1:
			want = "odd"
		case i%3 == 0:
			want = "third"
		}
		if rej.Status.Message() != want {
			t.Fatalf("cluster %d: got %q, want %q", i, rej.Status.Message(), want)
		}
	}
	if len(c.Feasible) != 333 || c.Feasible[0] != 2 || len(c.Candidates) != 333 || !reflect.DeepEqual(c.ScorePlugins, []string{"Score"}) {
		t.Fatalf("feasible %d, first %d, candidates %d", len(c.Feasible), c.Feasible[0], len(c.Candidates))
	}
	for j, idx := range c.Feasible {
		if c.Scores[j] != int64(idx%101) || c.Totals[j] != 2*int64(idx%101) || c.Candidates[j].Score != c.Totals[j] || c.Candidates[j].Name != snap.At(int(idx)).Name {
			t.Fatalf("feasible %d (cluster %d): score %d total %d candidate %+v", j, idx, c.Scores[j], c.Totals[j], c.Candidates[j])
		}
	}
}

func TestRunErrors(t *testing.T) {
	snap := fwtest.Snapshot(t, manyClusters(10)...)
	boom := framework.AsStatus(fmt.Errorf("boom"))
	if _, err := run(t, snap, &fakePlugin{name: "F", filter: func(i int) *framework.Status {
		if i == 4 {
			return boom
		}
		return nil
	}}); err == nil || !strings.Contains(err.Error(), "filter plugin F on cluster c0004: boom") {
		t.Errorf("filter error: %v", err)
	}
	if _, err := run(t, snap, &fakePlugin{name: "S", score: func(int) int64 { return 101 }}); err == nil || !strings.Contains(err.Error(), "outside 0..100") {
		t.Errorf("score out of range: %v", err)
	}
	// A PreFilter rejecting everything rejects what the filters before it
	// left, and no more.
	all := framework.NewStatus(framework.Unschedulable, "nothing fits")
	odd := framework.NewStatus(framework.Unschedulable, "odd")
	c, err := run(t, snap,
		&fakePlugin{name: "Odd", filter: func(i int) *framework.Status {
			if i%2 == 1 {
				return odd
			}
			return nil
		}},
		&fakePlugin{name: "P", pre: all, filter: func(int) *framework.Status { return nil }})
	if err != nil || len(c.Feasible) != 0 || c.Rejections[8].Status != all || c.Rejections[8].Plugin != "P" || c.Rejections[9].Plugin != "Odd" {
		t.Errorf("PreFilter Unschedulable: %v, %+v", err, c.Rejections)
	}
}

func TestCandidates(t *testing.T) {
	snap := fwtest.Snapshot(t, manyClusters(5)...)
	c, err := run(t, snap, &fakePlugin{name: "S", score: func(int) int64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	held := c.Candidates[3]
	if !held.Held || held.Previous != 7 || held.Available != core.Unlimited || c.Candidates[2].Held || c.Candidates[2].Previous != 0 {
		t.Errorf("candidates: %+v", c.Candidates)
	}
}
