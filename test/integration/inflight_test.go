package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestInFlightSurvivesARestart: a scheduler stopped in the middle of a
// burst and started again does not place onto a cluster the replicas it
// placed before and the cluster does not report yet. The cluster has two
// nodes of 4 free CPUs and reports none of the workloads' pods (no member
// answers), so at most 8 one-CPU replicas may go there, whichever process
// placed them.
func TestInFlightSurvivesARestart(t *testing.T) {
	suite.Hub(t)
	const ns, cluster = "inflight", "inflight-a"
	ctx := context.Background()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := testenv.CreateReadyCluster(ctx, c, cluster, nil); err != nil {
		t.Fatal(err)
	}
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
		t.Fatal(err)
	}
	q := resource.MustParse
	cl.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: q("8"), corev1.ResourceMemory: q("64Gi"), corev1.ResourcePods: q("220")},
		Nodes:       []clusterv1alpha1.NodeGroup{{Count: 2, Free: corev1.ResourceList{corev1.ResourceCPU: q("4"), corev1.ResourceMemory: q("32Gi"), corev1.ResourcePods: q("110")}}},
	}
	if err := c.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.DeleteAllOf(ctx, &workv1alpha1.ResourceBinding{}, client.InNamespace(ns))
		_ = c.Delete(ctx, cl)
	})

	start := func() *testenv.Manager {
		m, err := hub.StartManager(func(mgr ctrl.Manager) error {
			return scheduling.Setup(controllerdeps.Deps{Manager: mgr}, scheduling.Options{})
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	create := func(from, to int) {
		for i := from; i < to; i++ {
			b := &workv1alpha1.ResourceBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%d-deployment", i)},
				Spec: workv1alpha1.BindingSpec{
					Resource:            workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: fmt.Sprintf("w%d", i), UID: fmt.Sprintf("uid-w%d", i)},
					Replicas:            2,
					ReplicaRequirements: &workv1alpha1.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: q("1")}},
					Placement: &policyv1alpha1.Placement{
						ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}},
						ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
							ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
							ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated,
						},
					},
				},
			}
			if err := c.Create(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	// decided counts the bindings with a Scheduled condition and the
	// replicas placed on the cluster.
	decided := func() (int, int32, error) {
		list := &workv1alpha1.ResourceBindingList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return 0, 0, err
		}
		n, placed := 0, int32(0)
		for _, b := range list.Items {
			if meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled) != nil {
				n++
			}
			for _, tc := range b.Spec.Clusters {
				placed += tc.Replicas
			}
		}
		return n, placed, nil
	}

	first := start()
	create(0, 3)
	testenv.Eventually(t, time.Minute, "the first three placed", func() error {
		if n, placed, err := decided(); err != nil || n != 3 || placed != 6 {
			return fmt.Errorf("%d decided, %d replicas placed (%v)", n, placed, err)
		}
		return nil
	})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	// The rest of the burst arrives while no scheduler runs.
	create(3, 8)
	second := start()
	t.Cleanup(func() { _ = second.Stop() })
	testenv.Eventually(t, time.Minute, "the whole burst decided", func() error {
		n, placed, err := decided()
		if err != nil || n != 8 {
			return fmt.Errorf("%d of 8 decided (%v)", n, err)
		}
		if placed != 8 {
			return fmt.Errorf("%d replicas placed on a cluster of 8 CPUs, want 8", placed)
		}
		return nil
	})
}
