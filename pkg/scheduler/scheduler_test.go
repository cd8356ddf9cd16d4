package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

func TestUnschedulableMessage(t *testing.T) {
	var clusters []framework.ClusterInfo
	for i := range 40 {
		c := cluster(fmt.Sprintf("c%02d", i), "aws", "r1", "z1", nil)
		if i < 12 {
			c.APIs = append(c.APIs, "apps/v1/StatefulSet")
			c.Taints = []corev1.Taint{{Key: "key", Value: "value", Effect: corev1.TaintEffectNoSchedule}}
		}
		clusters = append(clusters, c)
	}
	w := deployment("db", 3, nil)
	w.Kind = "StatefulSet"
	res, err := NewDefault().Schedule(context.Background(), snapshot(t, clusters...), w)
	var ue *UnschedulableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an UnschedulableError", err)
	}
	const want = "0/40 clusters available: 28 missing apps/v1/StatefulSet, 12 untolerated taint {key=value:NoSchedule}"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	// The taint filter runs after the API filter: it rejected the last
	// clusters standing.
	if got, want := ue.Category(), "untolerated taint {key=value:NoSchedule}"; got != want {
		t.Errorf("category: got %q, want %q", got, want)
	}
	if res == nil || len(res.Targets) != 0 {
		t.Fatalf("want a result without targets, got %+v", res)
	}
	e := res.Explain(0)
	if e.FilteredBy != "TaintToleration" || e.Reason != "untolerated taint {key=value:NoSchedule}" {
		t.Errorf("c00 explained as %+v", e)
	}
}

// TestRoomMessage: when the feasible clusters lack room for a Divided
// workload, the message names each cluster, how many replicas fit there
// and what limits it, with the node model when a replica cannot span
// nodes; the category stays free of them.
func TestRoomMessage(t *testing.T) {
	frag := cluster("frag", "aws", "r1", "z1", nil)
	frag.Nodes = []framework.NodeRoom{{Count: 2, Free: framework.Resources{MilliCPU: 1500, Memory: 8 * gib, Pods: 110}}}
	small := cluster("small", "aws", "r1", "z1", nil)
	small.Available = framework.Resources{MilliCPU: 1000, Memory: 100 * gib, Pods: 110}
	p := &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)}
	_, err := NewDefault().Schedule(context.Background(), snapshot(t, frag, small), deployment("web", 9, p))
	var ue *UnschedulableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an UnschedulableError", err)
	}
	const want = "2/2 clusters available: replicas: 9 requested, feasible clusters fit 3; room: frag fits 2 (room on any one node: 2 × 1500m CPU 8192Mi 110 pods free); small fits 1 (cpu)"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	if got := ue.Category(); strings.Contains(got, "frag") || strings.Contains(got, "room:") {
		t.Errorf("category names clusters: %q", got)
	}
	// None feasible: the clusters the room filter rejected are named.
	_, err = NewDefault().Schedule(context.Background(), snapshot(t, frag, small), deployment("web", 3, nil))
	const wantDup = "0/2 clusters available: 1 insufficient cpu for all replicas, 1 insufficient room on any one node for all replicas; room: frag fits 2 (room on any one node: 2 × 1500m CPU 8192Mi 110 pods free); small fits 1 (cpu)"
	if err == nil || err.Error() != wantDup {
		t.Errorf("Duplicated message:\n got %v\nwant %s", err, wantDup)
	}
}

func TestCoreConstraintMessage(t *testing.T) {
	snap := snapshot(t,
		cluster("a", "aws", "r1", "z1", nil), cluster("b", "aws", "r2", "z2", nil),
		cluster("c", "aws", "", "", nil), cluster("d", "aws", "r1", "z3", nil))
	p := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
		{SpreadByField: "cluster", MinGroups: 3, MaxGroups: ptr.To[int32](3)},
		{SpreadByField: "region", MinGroups: 3, MaxGroups: ptr.To[int32](3)},
	}}
	res, err := NewDefault().Schedule(context.Background(), snap, deployment("web", 3, p))
	var ue *UnschedulableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an UnschedulableError", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "3/4 clusters available (1 cluster has no region to spread by): spreadConstraints[region].minGroups: ") {
		t.Errorf("message: %s", msg)
	}
	if got := ue.Category(); !strings.HasPrefix(got, "spreadConstraints[region].minGroups: ") || strings.ContainsAny(got, "0123456789") {
		t.Errorf("category: %q", got)
	}
	if e := res.Explain(0); e.FilteredBy != "" || !strings.Contains(e.Reason, "spreadConstraints[region].minGroups") {
		t.Errorf("feasible cluster explained as %+v", e)
	}
}

func TestExplanations(t *testing.T) {
	small := cluster("small", "aws", "r1", "z1", map[string]string{"env": "prod"})
	small.Available = framework.Resources{MilliCPU: 10_000, Memory: 100 * gib, Pods: 110}
	snap := snapshot(t,
		cluster("big", "aws", "r1", "z1", map[string]string{"env": "prod"}),
		small,
		cluster("dev", "aws", "r1", "z1", map[string]string{"env": "dev"}),
		cluster("held", "aws", "r1", "z1", map[string]string{"env": "prod"}),
	)
	p := &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 2, MaxGroups: ptr.To[int32](2)}},
		ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated),
	}
	w := deployment("web", 4, p)
	w.Previous = []workv1alpha1.TargetCluster{{Name: "held", Replicas: 4}}
	res, err := NewDefault().Schedule(context.Background(), snap, w)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if got := res.ScorePlugins(); !reflect.DeepEqual(got, []string{"Locality", "Capacity"}) {
		t.Errorf("score plugins %v (PreferredAffinity has no terms and must be skipped)", got)
	}
	byName := map[string]Explanation{}
	for _, e := range res.Explanations() {
		byName[e.Cluster] = e
	}
	if e := byName["dev"]; e.FilteredBy != "ClusterAffinity" || e.Reason != "with labels not matching the labelSelector" || e.Selected {
		t.Errorf("dev: %+v", e)
	}
	held := byName["held"]
	if !held.Selected || held.Reason != ReasonSelected || held.Total != 4*100+100 {
		t.Errorf("held: %+v", held)
	}
	if got := held.Scores; !reflect.DeepEqual(got, []workv1alpha1.PluginScore{{Plugin: "Locality", Score: 100}, {Plugin: "Capacity", Score: 100}}) {
		t.Errorf("held scores: %v", got)
	}
	if s := byName["small"]; s.Selected || s.Total != 10 || s.Reason == "" {
		t.Errorf("small: %+v", s)
	}
	var selected []string
	for _, tc := range res.Targets {
		selected = append(selected, tc.Name)
	}
	if !reflect.DeepEqual(selected, []string{"big", "held"}) {
		t.Errorf("targets %v, want [big held]", res.Targets)
	}
	decisions := res.Decisions()
	if len(decisions) != 4 || decisions[0].ClusterName != "big" || decisions[1].ClusterName != "held" ||
		decisions[2].ClusterName != "small" || decisions[3].ClusterName != "dev" {
		t.Errorf("decisions order: %+v", decisions)
	}
}

func TestDecisionsCapped(t *testing.T) {
	var clusters []framework.ClusterInfo
	for i := range 100 {
		clusters = append(clusters, cluster(fmt.Sprintf("c%03d", i), "aws", "r1", "z1", nil))
	}
	p := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{Exclude: []string{"c000", "c001"}}}
	res, err := NewDefault().Schedule(context.Background(), snapshot(t, clusters...), deployment("web", 1, p))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decisions()
	if len(d) != workv1alpha1.MaxSchedulingDecisions {
		t.Fatalf("%d decisions, want %d", len(d), workv1alpha1.MaxSchedulingDecisions)
	}
	for _, x := range d {
		if !x.Selected {
			t.Fatalf("decision %+v: the 98 selected clusters must come first", x)
		}
	}
}

func TestFallbackAffinityTerms(t *testing.T) {
	tainted := cluster("eu-1", "aws", "eu", "eu-a", nil)
	tainted.Taints = []corev1.Taint{{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	snap := snapshot(t, tainted, cluster("us-1", "aws", "us", "us-a", nil), cluster("us-2", "aws", "us", "us-b", nil))
	p := &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "eu", ClusterAffinity: policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{
			MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{{Key: "region", Operator: "In", Values: []string{"eu"}}}}}},
		{AffinityName: "us", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"us-1", "us-2"}}},
	}}
	s := NewDefault()
	ctx := context.Background()
	names := func(res *Result) []string {
		var out []string
		for _, tc := range res.Targets {
			out = append(out, tc.Name)
		}
		return out
	}

	res, err := s.Schedule(ctx, snap, deployment("web", 2, p))
	if err != nil || res.AffinityName != "us" || !reflect.DeepEqual(names(res), []string{"us-1", "us-2"}) {
		t.Fatalf("first schedule: %v, %+v", err, res)
	}

	// The eu cluster recovers. A steady workload stays on the term in force;
	// a reschedule starts over from the first term.
	snap = snapshot(t, cluster("eu-1", "aws", "eu", "eu-a", nil), cluster("us-1", "aws", "us", "us-a", nil), cluster("us-2", "aws", "us", "us-b", nil))
	steady := deployment("web", 2, p)
	steady.ObservedAffinityName, steady.Previous = "us", res.Targets
	if res, err := s.Schedule(ctx, snap, steady); err != nil || res.AffinityName != "us" {
		t.Errorf("steady: %v, %+v", err, res)
	}
	fresh := *steady
	fresh.Mode = core.Fresh
	if res, err := s.Schedule(ctx, snap, &fresh); err != nil || res.AffinityName != "eu" || !reflect.DeepEqual(names(res), []string{"eu-1"}) {
		t.Errorf("fresh: %v, %+v", err, res)
	}

	// No term fits: the error lists every term tried.
	_, err = s.Schedule(ctx, snapshot(t, tainted), deployment("web", 2, p))
	want := `affinity term "eu": 0/1 clusters available: 1 untolerated taint {maintenance=true:NoSchedule}; ` +
		`affinity term "us": 0/1 clusters available: 1 not in clusterNames (affinity term "us")`
	if err == nil || err.Error() != want {
		t.Errorf("all terms fail:\n got %v\nwant %s", err, want)
	}
}

func TestRegistryAndProfile(t *testing.T) {
	tainted := cluster("tainted", "aws", "r1", "z1", nil)
	tainted.Taints = []corev1.Taint{{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	snap := snapshot(t, tainted, cluster("plain", "aws", "r1", "z1", nil), cluster("odd", "aws", "r1", "z1", nil))

	s, err := New(DefaultProfile().Disable("TaintToleration").WithFilter(noOddName), framework.Registry{noOddName: newNoOdd})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Schedule(context.Background(), snap, deployment("web", 1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != 2 || res.Targets[0].Name != "plain" || res.Targets[1].Name != "tainted" {
		t.Errorf("targets %v, want plain and tainted", res.Targets)
	}
	if e := res.Explain(0); e.FilteredBy != noOddName || e.Reason != "odd one out" {
		t.Errorf("odd: %+v", e)
	}

	if _, err := New(DefaultProfile(), framework.Registry{"Capacity": newNoOdd}); err == nil {
		t.Error("registering an in-tree name again must fail")
	}
	if _, err := New(DefaultProfile().WithFilter("Missing"), nil); err == nil {
		t.Error("a profile naming an unknown plugin must fail")
	}
	if _, err := New(DefaultProfile().WithScore(noOddName, 1), framework.Registry{noOddName: newNoOdd}); err == nil {
		t.Error("a filter used as a score plugin must fail")
	}
}

const noOddName = "NoOdd"

// noOdd is an out-of-tree filter rejecting the cluster named "odd".
type noOdd struct{}

var errOdd = framework.NewStatus(framework.Unschedulable, "odd one out")

func newNoOdd(json.RawMessage) (framework.Plugin, error) { return noOdd{}, nil }
func (noOdd) Name() string                               { return noOddName }
func (noOdd) Filter(_ context.Context, _ *framework.CycleState, _ *framework.Workload, ci *framework.ClusterInfo) *framework.Status {
	if ci.Name == "odd" {
		return errOdd
	}
	return nil
}

// Overflow affinities: replicas the term's own clusters cannot hold go to
// the overflow clusters, tier by tier; when room returns on the term's
// clusters, the next scheduling brings them back without moving the rest;
// a Duplicated workload and a kind without replicas never overflow.
func TestOverflowAffinities(t *testing.T) {
	withRoom := func(name string, pods int64) framework.ClusterInfo {
		c := cluster(name, "aws", "r", "z", nil)
		c.Available.Pods = pods
		return c
	}
	p := &policyv1alpha1.Placement{
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:    "on-prem",
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"dc-1", "dc-2"}},
			OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{
				{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"cloud-1", "dc-1"}}},
				{AffinityName: "far", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"far-1"}}},
			},
		}},
		ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted),
	}
	p.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	s := NewDefault()
	ctx := context.Background()
	show := func(res *Result) string {
		var out []string
		for _, tc := range res.Targets {
			out = append(out, fmt.Sprintf("%s:%d", tc.Name, tc.Replicas))
		}
		return strings.Join(out, " ")
	}
	full := snapshot(t, withRoom("dc-1", 4), withRoom("dc-2", 2), withRoom("cloud-1", 10), withRoom("far-1", 10), withRoom("other", 50))
	for _, tc := range []struct {
		name     string
		replicas int32
		want     string
	}{
		{"fits on the term's clusters", 5, "dc-1:3 dc-2:2"},
		{"overflows to the first tier", 10, "cloud-1:4 dc-1:4 dc-2:2"},
		{"then to the next", 20, "cloud-1:10 dc-1:4 dc-2:2 far-1:4"},
	} {
		res, err := s.Schedule(ctx, full, deployment("web", tc.replicas, p))
		if err != nil || show(res) != tc.want {
			t.Errorf("%s: %v, got %q, want %q", tc.name, err, show(res), tc.want)
		}
	}
	if _, err := s.Schedule(ctx, full, deployment("web", 27, p)); err == nil ||
		!strings.Contains(err.Error(), "the affinity term and its overflowAffinities hold 26 of 27 replicas") {
		t.Errorf("beyond every tier: %v", err)
	}
	// The explanation of a tier not needed.
	res, err := s.Schedule(ctx, full, deployment("web", 5, p))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Explanations() {
		if e.Cluster == "far-1" && e.Reason != "overflowAffinities[1] not needed: the clusters before it hold all 5 replicas" {
			t.Errorf("far-1: %q", e.Reason)
		}
	}

	// Room returns on dc-1 (its 4 replicas run there, 6 more fit): the
	// overflow replicas come back, dc-2 keeps its 2.
	back := snapshot(t, withRoom("dc-1", 6), withRoom("dc-2", 0), withRoom("cloud-1", 6), withRoom("far-1", 10), withRoom("other", 50))
	w := deployment("web", 10, p)
	w.ObservedAffinityName = "on-prem"
	w.Previous = []workv1alpha1.TargetCluster{{Name: "cloud-1", Replicas: 4}, {Name: "dc-1", Replicas: 4}, {Name: "dc-2", Replicas: 2}}
	if res, err := s.Schedule(ctx, back, w); err != nil || show(res) != "dc-1:8 dc-2:2" {
		t.Errorf("room returned: %v, got %q", err, show(res))
	}

	// Duplicated never overflows: it runs on the term's clusters only.
	dup := p.DeepCopy()
	dup.ReplicaScheduling = nil
	if res, err := s.Schedule(ctx, full, deployment("web", 2, dup)); err != nil || show(res) != "dc-1:2 dc-2:2" {
		t.Errorf("duplicated: %v, got %q", err, show(res))
	}
}
