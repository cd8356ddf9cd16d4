package scheduling

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// gangBinding is a RayCluster's binding: a 2-cpu head and four 4-cpu
// workers, placed whole on the targets given.
func gangBinding(name string, targets ...string) *workv1alpha1.ResourceBinding {
	req := func(cpu string) *workv1alpha1.ComponentReplicaRequirements {
		return &workv1alpha1.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "5"}}
	b.Spec.Resource = workv1alpha1.ObjectReference{APIVersion: "ray.io/v1", Kind: "RayCluster", Namespace: "ns", Name: name, UID: name}
	b.Spec.Components = []workv1alpha1.Component{
		{Name: "ray-head", Replicas: 1, ReplicaRequirements: req("2")},
		{Name: "workers", Replicas: 4, ReplicaRequirements: req("4")},
	}
	for _, t := range targets {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: t,
			Components: []workv1alpha1.TargetComponent{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 4}}})
	}
	return b
}

// TestEntriesOfGang: a gang placed on a cluster takes the room of every
// component there, each with its own request; its copy's status replicas
// are not read as any one component's.
func TestEntriesOfGang(t *testing.T) {
	at := metav1.NewTime(tFlight)
	b := gangBinding("train", "member3")
	b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: "member9", State: workv1alpha1.TargetUnscheduled,
		Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 4}}})
	b.Status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{{ClusterName: "member3", StatusTime: &at,
		Status: &runtime.RawExtension{Raw: []byte(`{"replicas":5}`)}}}
	want := []ledgerEntry{
		{cluster: "member3", replicas: 1, request: framework.Resources{MilliCPU: 2000}, reported: -1, reportedAt: tFlight},
		{cluster: "member3", replicas: 4, request: framework.Resources{MilliCPU: 4000}, reported: -1, reportedAt: tFlight},
	}
	if got := entriesOf(interpreter.New(), b); !sameEntries(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestGangsBackToBack: a gang assumed on a cluster takes its room from the
// next cycle's snapshot, so a second gang scheduled right after does not
// claim the same room: it goes to the other cluster that holds it whole,
// and when there is none it is Unschedulable. Once the member reported
// the first gang before the cluster's summary was written, its room is
// the summary's to count and no longer in flight.
func TestGangsBackToBack(t *testing.T) {
	node := func(count, cpu int64) framework.NodeRoom {
		return framework.NodeRoom{Count: count, Free: framework.Resources{MilliCPU: cpu * 1000, Memory: 64 << 30, Pods: 110}}
	}
	member := func(name string, model framework.NodeRoom, probedAt time.Time) framework.ClusterInfo {
		return framework.ClusterInfo{Name: name, APIs: []string{"ray.io/v1/RayCluster"}, Probed: true, Ready: metav1.ConditionTrue,
			ProbedAt: probedAt, Nodes: []framework.NodeRoom{model},
			Available: framework.Resources{MilliCPU: model.Count * model.Free.MilliCPU, Memory: model.Count * model.Free.Memory, Pods: model.Count * 110}}
	}
	snap, err := framework.NewSnapshot([]framework.ClusterInfo{member("member1", node(2, 10), tFlight), member("member3", node(2, 10), tFlight)})
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(interpreter.New())
	schedule := func(name string, snap *framework.Snapshot) (*scheduler.Result, error) {
		rs, _ := l.reservations(snap)
		w := framework.WorkloadFromBinding(gangBinding(name), tFlight)
		// One cluster each: the placement picks one of those that fit.
		w.Placement = &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: ptr.To[int32](1)}}}
		return scheduler.NewDefault().Schedule(context.Background(), snap.WithReservations(rs), w)
	}

	first, err := schedule("a", snap)
	if err != nil {
		t.Fatal(err)
	}
	l.assume("a", gangBinding("a"), first.Targets)
	second, err := schedule("b", snap)
	if err != nil {
		t.Fatal(err)
	}
	if first.Targets[0].Name == second.Targets[0].Name {
		t.Fatalf("both gangs claimed %s", first.Targets[0].Name)
	}
	l.assume("b", gangBinding("b"), second.Targets)
	_, err = schedule("c", snap)
	var ue *scheduler.UnschedulableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `component "workers" (4 × cpu 4) does not fit: 0 of 4 fit on the nodes of member1`) {
		t.Fatalf("a third gang: got %v, want Unschedulable naming the workers", err)
	}

	// Both members report their gang before their next summary: the
	// room is now the summary's to count, and this one still has it.
	reported := metav1.NewTime(tFlight)
	for _, name := range []string{"a", "b"} {
		b := gangBinding(name, map[string]string{"a": first.Targets[0].Name, "b": second.Targets[0].Name}[name])
		b.ResourceVersion = "6"
		b.Status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{{ClusterName: b.Spec.Clusters[0].Name, StatusTime: &reported}}
		l.observe(name, b)
	}
	later, err := framework.NewSnapshot([]framework.ClusterInfo{
		member("member1", node(2, 10), tFlight.Add(time.Second)), member("member3", node(2, 10), tFlight.Add(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := l.reservations(later); len(rs) != 0 {
		t.Errorf("still in flight: %+v", rs)
	}
}
