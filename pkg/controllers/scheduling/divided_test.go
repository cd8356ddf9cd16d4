package scheduling

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// poolCluster is a ready cluster serving WorkerPools on nodes of the
// cores given, one node each.
func poolCluster(name string, cores ...string) *clusterv1alpha1.Cluster {
	q := resource.MustParse
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	now := metav1.NewTime(tFlight)
	c.Status = clusterv1alpha1.ClusterStatus{
		LastProbeTime: &now,
		Conditions:    []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}},
		APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "example.io/v1",
			Resources: []clusterv1alpha1.APIResource{{Name: "workerpools", Kind: "WorkerPool"}}}},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: q("0"), corev1.ResourceMemory: q("0"), corev1.ResourcePods: q("0")}},
	}
	rs := c.Status.ResourceSummary
	for _, n := range cores {
		free := corev1.ResourceList{corev1.ResourceCPU: q(n), corev1.ResourceMemory: q("64Gi"), corev1.ResourcePods: q("110")}
		rs.Nodes = append(rs.Nodes, clusterv1alpha1.NodeGroup{Count: 1, Free: free})
		for k, v := range free {
			sum := rs.Allocatable[k]
			sum.Add(v)
			rs.Allocatable[k] = sum
		}
	}
	return c
}

// poolBinding is a WorkerPool's binding: an 8-core head and a divisible
// group of 2-core workers, placed by placement.
func poolBinding(workers int32, p *policyv1alpha1.Placement, paths bool) *workv1alpha1.ResourceBinding {
	req := func(cpu string) *workv1alpha1.ComponentReplicaRequirements {
		return &workv1alpha1.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pool-workerpool"}}
	b.Spec.Resource = workv1alpha1.ObjectReference{APIVersion: "example.io/v1", Kind: "WorkerPool", Namespace: "ns", Name: "pool", UID: "uid-pool"}
	b.Spec.Placement = p
	b.Spec.Components = []workv1alpha1.Component{
		{Name: "head", Replicas: 1, ReplicaRequirements: req("8")},
		{Name: "workers", Replicas: workers, ReplicaRequirements: req("2"), Divisible: true},
	}
	if paths {
		b.Spec.Components[0].ReplicasPath, b.Spec.Components[1].ReplicasPath = "/spec/head/replicas", "/spec/workers/replicas"
	}
	return b
}

func divideIndependent() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{Components: &policyv1alpha1.ComponentsPlacement{Division: policyv1alpha1.ComponentDivisionDivideIndependent}}
}

// reconcileOnce runs one scheduling reconcile of b over the clusters and
// returns the binding as written.
func reconcileOnce(t *testing.T, b *workv1alpha1.ResourceBinding, clusters ...*clusterv1alpha1.Cluster) *workv1alpha1.ResourceBinding {
	t.Helper()
	objs := []client.Object{b}
	for _, c := range clusters {
		objs = append(objs, c)
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).WithStatusSubresource(b).Build()
	r := &Reconciler[*workv1alpha1.ResourceBinding]{
		client: c, apiReader: c, kind: bindingutil.ResourceBindings(), fleet: NewFleet(c, interpreter.New()),
		recorder: events.NewFakeRecorder(10), conflicts: conflicts.NewRequeue(), opts: Options{}.withDefaults(),
		backoff: workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](), now: func() time.Time { return tFlight },
	}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}); err != nil {
		t.Fatal(err)
	}
	got := &workv1alpha1.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// A divided placement is written with its head cluster in one patch, the
// hash covering both; a workload whose policy asks for division and that
// cannot be divided is placed whole, and the Scheduled condition says why.
func TestDividedPlacementWritten(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{poolCluster("m1", "4", "4"), poolCluster("m2", "10"), poolCluster("m3", "4", "4", "4")}
	got := reconcileOnce(t, poolBinding(9, divideIndependent(), true), clusters...)
	want := []workv1alpha1.TargetCluster{
		{Name: "m1", State: workv1alpha1.TargetScheduled, Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 4}}},
		{Name: "m2", State: workv1alpha1.TargetScheduled, Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}}},
		{Name: "m3", State: workv1alpha1.TargetScheduled, Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 5}}},
	}
	if !reflect.DeepEqual(got.Spec.Clusters, want) || got.Spec.DividedComponents == nil || got.Spec.DividedComponents.HeadCluster != "m2" {
		t.Errorf("targets %+v, division %+v; want %+v with the head on m2", got.Spec.Clusters, got.Spec.DividedComponents, want)
	}
	if got.Annotations[workv1alpha1.AnnotationScheduledHash] != SchedulingHash(&got.Spec) {
		t.Error("the hash does not cover what was written")
	}
	moved := got.Spec.DeepCopy()
	moved.DividedComponents.HeadCluster = "m1"
	if SchedulingHash(moved) == SchedulingHash(&got.Spec) {
		t.Error("a head cluster edited by hand must change the hash")
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionScheduled); c == nil || c.Status != metav1.ConditionTrue || strings.Contains(c.Message, "whole") {
		t.Errorf("Scheduled %+v", c)
	}
	if Decide(got, snapshotOf(t, clusters...)) != TriggerNone {
		t.Errorf("a divided placement written is scheduled again: %s", Decide(got, snapshotOf(t, clusters...)))
	}

	// Without replicasPaths it cannot be divided: whole, on the one
	// cluster that holds the head and one worker, and the reason said.
	whole := reconcileOnce(t, poolBinding(1, divideIndependent(), false), clusters...)
	if len(whole.Spec.Clusters) != 1 || whole.Spec.Clusters[0].Name != "m2" || whole.Spec.DividedComponents != nil {
		t.Errorf("placed %+v, division %+v; want whole on m2", whole.Spec.Clusters, whole.Spec.DividedComponents)
	}
	c := meta.FindStatusCondition(whole.Status.Conditions, workv1alpha1.ConditionScheduled)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `placement asks to divide its components (components.division: DivideIndependent), but component "head" has no replicasPath`) {
		t.Errorf("Scheduled %+v: want the reason it is not divided", c)
	}
}

// snapshotOf is the scheduler's snapshot of the clusters.
func snapshotOf(t *testing.T, clusters ...*clusterv1alpha1.Cluster) *framework.Snapshot {
	t.Helper()
	list := make([]clusterv1alpha1.Cluster, len(clusters))
	for i, c := range clusters {
		list[i] = *c
	}
	snap, err := framework.SnapshotFromClusters(list)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// A divided gang placed everywhere would be moved by every cluster that
// becomes eligible: it is not checked for them (the trigger of a
// placement that takes every eligible cluster does not apply).
func TestDividedGangIsNotPlacedEverywhere(t *testing.T) {
	b := poolBinding(4, divideIndependent(), true)
	if placement.PlacesEverywhere(&b.Spec) {
		t.Error("a divided gang takes every eligible cluster")
	}
	b.Spec.Placement = nil
	if !placement.PlacesEverywhere(&b.Spec) {
		t.Error("a gang placed whole (Duplicated) no longer takes every eligible cluster")
	}
}

// A divided gang's shares are in flight where they were placed, each
// with its component's request: a second gang scheduled right after sees
// the room the first took, head and workers alike.
func TestDividedGangsBackToBack(t *testing.T) {
	snap := snapshotOf(t, poolCluster("m1", "4", "4"), poolCluster("m2", "10"), poolCluster("m3", "4", "4", "4"))
	l := newLedger(interpreter.New())
	schedule := func(b *workv1alpha1.ResourceBinding) (*scheduler.Result, error) {
		rs, _ := l.reservations(snap)
		return scheduler.NewDefault().Schedule(context.Background(), snap.WithReservations(rs), framework.WorkloadFromBinding(b, tFlight))
	}
	first := poolBinding(9, divideIndependent(), true)
	res, err := schedule(first)
	if err != nil {
		t.Fatal(err)
	}
	l.assume("first", first, res.Targets)
	withTargets := first.DeepCopy()
	withTargets.Spec.Clusters = res.Targets
	want := []ledgerEntry{
		{cluster: "m1", replicas: 4, request: framework.Resources{MilliCPU: 2000}, reported: -1},
		{cluster: "m2", replicas: 1, request: framework.Resources{MilliCPU: 8000}, reported: -1},
		{cluster: "m3", replicas: 5, request: framework.Resources{MilliCPU: 2000}, reported: -1},
	}
	if got := entriesOf(interpreter.New(), withTargets); !sameEntries(got, want) {
		t.Errorf("in flight %+v, want %+v", got, want)
	}
	second := poolBinding(1, divideIndependent(), true)
	second.Name = "second"
	_, err = schedule(second)
	var ue *scheduler.UnschedulableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the components that are not divisible fit together on no cluster") {
		t.Fatalf("a second head where the first took the room: got %v", err)
	}
}
