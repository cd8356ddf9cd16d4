package fleetbench

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

func TestCapacityFleetHoldsTheShareAsked(t *testing.T) {
	for _, tc := range []struct {
		members, deployments int
		replicas             int32
		fraction             float64
		wantRoom             int
	}{
		{members: 20, deployments: 1000, replicas: 2, fraction: 0.6, wantRoom: 1200},
		{members: 2, deployments: 20, replicas: 2, fraction: 0.6, wantRoom: 24},
		{members: 3, deployments: 10, replicas: 3, fraction: 0.5, wantRoom: 12}, // 15 rounded down per node
		{members: 4, deployments: 1, replicas: 1, fraction: 0.1, wantRoom: 8},   // at least one replica a node
	} {
		f := capacityFleet(tc.members, tc.deployments, tc.replicas, tc.fraction)
		if err := f.Validate(); err != nil {
			t.Fatalf("%+v: invalid fleet: %v", tc, err)
		}
		room := 0
		for _, m := range f.Members {
			room += roomOf(m)
			if m.NodePods < int(m.NodeCPU.MilliValue()/capacityReplicaMilliCPU) {
				t.Errorf("%s: %d pod slots for %v CPU: pods, not CPU, would run out", m.Name, m.NodePods, m.NodeCPU.String())
			}
		}
		if room != tc.wantRoom {
			t.Errorf("%+v: room for %d replicas, want %d", tc, room, tc.wantRoom)
		}
	}
}

func TestValidCapacity(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Capacity: 0}, ""},
		{Options{Capacity: 0.6}, ""},
		{Options{Capacity: 1}, ""},
		{Options{Capacity: -0.1}, "above 0 and at most 1"},
		{Options{Capacity: 1.5}, "above 0 and at most 1"},
		{Options{Capacity: 0.6, MembersAPIOnly: true}, "members-api-only"},
		{Options{Capacity: 0.6, SimulatedPullClusters: 3}, "simulated-pull-clusters"},
	} {
		err := validCapacity(tc.o)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestBeyondRoom(t *testing.T) {
	f := capacityFleet(2, 20, 2, 0.6) // 12 replicas each
	got := beyondRoom(f, map[string]int{"member1": 15, "member2": 10, "elsewhere": 4})
	if got != 3 {
		t.Errorf("beyond room %d, want 3 (member1's 15 over 12; member2 under; unknown clusters ignored)", got)
	}
}

func TestCountMemberPods(t *testing.T) {
	pod := func(name, node string, cond *corev1.PodCondition, deleting bool) client.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
		if cond != nil {
			p.Status.Conditions = []corev1.PodCondition{*cond}
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
			p.Finalizers = []string{"test"}
		}
		return p
	}
	unschedulable := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}
	objs := []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "a"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "b"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}},
		pod("a-1", "node-0", nil, false),
		pod("a-2", "", unschedulable, false),
		pod("a-3", "", nil, false),
		pod("b-1", "node-1", nil, false),
		pod("b-old", "node-1", nil, true), // terminating: not counted
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "other"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	got, err := countMemberPods(context.Background(), c, "bench")
	if err != nil {
		t.Fatal(err)
	}
	want := memberPods{want: 5, exist: 5, untried: 1, running: 3, pending: 1}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.settled() {
		t.Error("settled with a pod the scheduler has not tried")
	}
	if !(memberPods{want: 2, exist: 2, running: 1, pending: 1}).settled() {
		t.Error("not settled with every pod tried")
	}
}

// TestRunFiniteCapacity runs the finite-capacity mode on two members with
// room for 60% of the replicas: the hub fills them, places nothing beyond
// their nodes, and no pod is left Pending in a member. Its fleet is its own
// (see shared): it comes first in the package, before the shared fleet
// starts, so as not to run beside it.
func TestRunFiniteCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet")
	}
	rep, err := Run(context.Background(), Options{Members: 2, Deployments: 20, Policies: 2, Capacity: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Capacity
	if c == nil {
		t.Fatal("no capacity report")
	}
	t.Logf("%+v", *c)
	if c.RoomReplicas != 24 {
		t.Errorf("room for %d replicas, want 24", c.RoomReplicas)
	}
	if c.PendingPods != 0 || c.ReplicasBeyondRoom != 0 {
		t.Errorf("%d pods Pending, %d replicas beyond room: want 0 and 0", c.PendingPods, c.ReplicasBeyondRoom)
	}
	if c.ScheduledWorkloads+c.UnschedulableWorkloads != 20 || c.UnschedulableWorkloads < 8 {
		t.Errorf("%d Scheduled, %d Unschedulable: want 20 in all, at least 8 (16 replicas) without room", c.ScheduledWorkloads, c.UnschedulableWorkloads)
	}
	if c.RunningPods != c.PlacedReplicas {
		t.Errorf("%d pods run for %d replicas placed", c.RunningPods, c.PlacedReplicas)
	}
}
