package scheduling

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestWriteStatusSurvivesConcurrentWriter: after a cycle patched the
// targets, another controller (binding, failover, work status) writes the
// binding before the scheduler's status patch. The patch conflicts; had
// it been dropped, the retry would find the hash annotation up to date
// and the Scheduled condition True, schedule nothing, and the cycle's
// decisions and lastScheduledTime would never be written (the failover
// e2e saw the pre-eviction decisions forever).
func TestWriteStatusSurvivesConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	b := scheduled(2, nil, workv1alpha1.TargetCluster{Name: "member2", Replicas: 2})
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(b).WithStatusSubresource(b).Build()
	r := &Reconciler[*workv1alpha1.ResourceBinding]{client: c, apiReader: c, kind: bindingutil.ResourceBindings()}

	ours := &workv1alpha1.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), ours); err != nil {
		t.Fatal(err)
	}
	// Another controller writes a condition of its own meanwhile.
	other := ours.DeepCopy()
	meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: workv1alpha1.ConditionFullyApplied, Status: metav1.ConditionTrue, Reason: "x"})
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}

	decisions := []workv1alpha1.ClusterDecision{{ClusterName: "member1", Reason: "workload was evicted from the cluster"}}
	if err := r.writeStatus(ctx, ours, func(s *workv1alpha1.BindingStatus) {
		s.LastScheduledTime = &t1
		s.SchedulingDecisions = decisions
	}); err != nil {
		t.Fatalf("writeStatus: %v", err)
	}
	got := &workv1alpha1.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.SchedulingDecisions) != 1 || got.Status.LastScheduledTime == nil || !got.Status.LastScheduledTime.Equal(&t1) {
		t.Errorf("the cycle's status was not written: %+v", got.Status)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionFullyApplied) {
		t.Errorf("the other writer's condition was lost: %+v", got.Status.Conditions)
	}

	// A newer cycle moved the targets meanwhile: its status is the one
	// that counts, so the stale one is not written.
	stale := got.DeepCopy()
	newer := got.DeepCopy()
	newer.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "member3", Replicas: 2}}
	newer.Annotations[workv1alpha1.AnnotationScheduledHash] = SchedulingHash(&newer.Spec)
	if err := c.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if err := r.writeStatus(ctx, stale, func(s *workv1alpha1.BindingStatus) { s.SchedulingDecisions = nil }); err != nil {
		t.Fatalf("writeStatus: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.SchedulingDecisions) != 1 {
		t.Errorf("a stale cycle overwrote the status: %+v", got.Status.SchedulingDecisions)
	}
}
