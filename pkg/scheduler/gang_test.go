package scheduler

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// rayCluster is a RayCluster of one 2-cpu head and four 4-cpu workers.
func rayCluster() *framework.Workload {
	return &framework.Workload{
		Namespace: "default", Name: "train", APIVersion: "ray.io/v1", Kind: "RayCluster", Now: testNow,
		Components: []framework.Component{
			{Name: "ray-head", Replicas: 1, Request: framework.Resources{MilliCPU: 2000, Memory: 4 * gib}},
			{Name: "workers", Replicas: 4, Request: framework.Resources{MilliCPU: 4000, Memory: 8 * gib}},
		},
	}
}

// rayMember serves RayClusters, with the node model given (none: the
// summed room alone, cpu cores given by flatCPU).
func rayMember(name string, flatCPU int64, model ...framework.NodeRoom) framework.ClusterInfo {
	c := cluster(name, "aws", "r1", "z1", nil)
	c.APIs = append(c.APIs, "ray.io/v1/RayCluster")
	c.Nodes = model
	c.Available = framework.Resources{MilliCPU: flatCPU * 1000, Memory: 100 * gib, Pods: 110}
	if len(model) > 0 {
		c.Available = framework.Resources{}
		for _, g := range model {
			c.Available.MilliCPU += g.Count * g.Free.MilliCPU
			c.Available.Memory += g.Count * g.Free.Memory
			c.Available.Pods += g.Count * g.Free.Pods
		}
	}
	return c
}

func rayNodes(count, cpu int64) framework.NodeRoom {
	return framework.NodeRoom{Count: count, Free: framework.Resources{MilliCPU: cpu * 1000, Memory: 32 * gib, Pods: 110}}
}

// TestGangLandsWhereItFitsWhole: of three clusters, member1 has the summed
// room of the gang (18 cores over three 6-core nodes) but no node left for
// its fourth worker once the head and three workers are placed; member2
// reports no node model and too little room; member3's two 10-core nodes
// hold it whole. The RayCluster lands on member3 alone, with every
// replica of each component recorded there; the others are explained by
// the component that does not fit.
func TestGangLandsWhereItFitsWhole(t *testing.T) {
	snap := snapshot(t, rayMember("member1", 0, rayNodes(3, 6)), rayMember("member2", 10), rayMember("member3", 0, rayNodes(2, 10)))
	res, err := NewDefault().Schedule(context.Background(), snap, rayCluster())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	want := []workv1alpha1.TargetCluster{{Name: "member3", Components: []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}}}
	if !reflect.DeepEqual(res.Targets, want) {
		t.Errorf("targets %+v, want %+v", res.Targets, want)
	}
	wantReasons := map[string]string{
		"member1": `component "workers" (4 × cpu 4, memory 8Gi) does not fit: 3 of 4 fit on the nodes of member1`,
		"member2": `component "workers" (4 × cpu 4, memory 8Gi) does not fit: 2 of 4 fit in the free room of member2`,
		"member3": ReasonSelected,
	}
	for _, e := range res.Explanations() {
		if e.Reason != wantReasons[e.Cluster] || (e.Cluster != "member3") != (e.FilteredBy == "GangFit") {
			t.Errorf("%s explained as %+v, want %q", e.Cluster, e, wantReasons[e.Cluster])
		}
	}
}

// TestGangFitsNowhere: when no cluster holds the gang whole, the workload
// is Unschedulable with each cluster's reason naming the component, and no
// target is placed.
func TestGangFitsNowhere(t *testing.T) {
	snap := snapshot(t, rayMember("member1", 0, rayNodes(3, 6)), rayMember("member2", 10))
	res, err := NewDefault().Schedule(context.Background(), snap, rayCluster())
	var ue *UnschedulableError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an UnschedulableError", err)
	}
	const want = `0/2 clusters available: ` +
		`1 component "workers" (4 × cpu 4, memory 8Gi) does not fit: 2 of 4 fit in the free room of member2, ` +
		`1 component "workers" (4 × cpu 4, memory 8Gi) does not fit: 3 of 4 fit on the nodes of member1`
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	if res == nil || len(res.Targets) != 0 {
		t.Errorf("want a result without targets, got %+v", res)
	}
}

// TestTargetsOfOtherKindsHaveNoComponents: a workload without components
// is placed as before, its targets without the field, so that no binding
// of every other kind changes.
func TestTargetsOfOtherKindsHaveNoComponents(t *testing.T) {
	snap := snapshot(t, cluster("a", "aws", "r1", "z1", nil), cluster("b", "aws", "r1", "z1", nil))
	res, err := NewDefault().Schedule(context.Background(), snap, deployment("web", 2, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range res.Targets {
		if tc.Components != nil {
			t.Errorf("target %s has components %+v", tc.Name, tc.Components)
		}
	}
	if !strings.Contains(strings.Join(DefaultProfile().Filters, ","), "ResourceFit,GangFit") {
		t.Errorf("GangFit must run beside ResourceFit: %v", DefaultProfile().Filters)
	}
}
