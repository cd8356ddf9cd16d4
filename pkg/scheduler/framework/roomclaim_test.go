package framework

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

func claim(total, ready int32, allocCPU string, groups ...clusterv1alpha1.NodeGroup) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "pull1"}}
	if total > 0 {
		c.Status.NodeSummary = &clusterv1alpha1.NodeSummary{TotalNum: total, ReadyNum: ready}
	}
	c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(allocCPU), corev1.ResourcePods: resource.MustParse("330")},
		Nodes:       groups,
	}
	return c
}

func group(count int32, cpu string) clusterv1alpha1.NodeGroup {
	return clusterv1alpha1.NodeGroup{Count: count, Free: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}}
}

// TestRoomClaimError: the room a cluster reports is believed only within
// its bounds, the probe's claims among the cases.
func TestRoomClaimError(t *testing.T) {
	bounded := claim(3, 3, "12", group(3, "4"))
	bounded.Spec.RoomBounds = &clusterv1alpha1.RoomBounds{MaxNodes: ptr.To[int32](2)}
	small := claim(3, 3, "12", group(3, "4"))
	small.Spec.RoomBounds = &clusterv1alpha1.RoomBounds{MaxNodeRoom: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	for _, tc := range []struct {
		name string
		c    *clusterv1alpha1.Cluster
		err  string
	}{
		{"a real member", claim(3, 3, "12", group(2, "4"), group(1, "2")), ""},
		{"no node summary: the defaults", claim(0, 0, "12", group(3, "4")), ""},
		{"a million cores on three nodes", claim(3, 3, "1000000", group(3, "4")), "status.resourceSummary.allocatable.cpu 1M is more than 3 Ready nodes of cpu may hold"},
		{"ten thousand nodes of 100 cores", claim(3, 3, "12", group(10000, "100")), "status.resourceSummary.nodes holds 10000 nodes or more by group 0, more than the 3 Ready nodes"},
		{"int32 nodes", claim(0, 0, "12", group(math.MaxInt32, "1")), "more than the 5000 Ready nodes"},
		{"a node bigger than any", claim(3, 3, "12", group(1, "5000")), "status.resourceSummary.nodes[0].free.cpu 5k is more than one node of cpu may hold"},
		{"more Ready than nodes", claim(3, 4, "12", group(3, "4")), "status.nodeSummary.readyNum 4 is not within 0 and totalNum 3"},
		{"more nodes than the admin's bound", bounded, "status.nodeSummary.totalNum 3 is more than the 2 nodes the cluster may report"},
		{"bigger nodes than the admin's bound", small, "spec.roomBounds.maxNodeRoom.cpu 2"},
	} {
		err := RoomClaimError(tc.c)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: want %q, got %v", tc.name, tc.err, err)
		}
		if got := ClusterInfoFromCluster(tc.c); (tc.err != "") != (got.Available.Pods == 0 && got.Nodes == nil) {
			t.Errorf("%s: room counted %+v, nodes %v, want it ignored exactly when out of bounds", tc.name, got.Available, got.Nodes)
		}
	}
}

// FuzzRoomClaimError: whatever a status claims, the check does not panic,
// and a claim it lets through holds no more nodes than the bound, counted
// without overflow.
func FuzzRoomClaimError(f *testing.F) {
	f.Add(int32(3), int32(3), int32(2), int32(1), int64(4000), int64(12000))
	f.Add(int32(0), int32(0), int32(math.MaxInt32), int32(math.MaxInt32), int64(math.MaxInt64), int64(-1))
	f.Fuzz(func(t *testing.T, total, ready, c1, c2 int32, cpu1, alloc int64) {
		c := &clusterv1alpha1.Cluster{}
		c.Status.NodeSummary = &clusterv1alpha1.NodeSummary{TotalNum: total, ReadyNum: ready}
		c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(alloc, resource.DecimalSI)},
			Nodes: []clusterv1alpha1.NodeGroup{
				{Count: c1, Free: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(cpu1, resource.DecimalSI)}},
				{Count: c2},
			},
		}
		if RoomClaimError(c) != nil {
			return
		}
		if n := int64(c1) + int64(c2); n > clusterv1alpha1.DefaultMaxNodes || n > int64(ready) {
			t.Fatalf("a model of %d nodes let through (ready %d)", n, ready)
		}
		_ = ClusterInfoFromCluster(c)
	})
}
