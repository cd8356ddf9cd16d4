package e2e

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// TestClusterStatus checks the members are probed: Ready, with version,
// APIs and capacity from their nodes.
func TestClusterStatus(t *testing.T) {
	for _, name := range members {
		eventually(t, name+" ready with a summary", func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return fmt.Errorf("not Ready: %+v", c.Status.Conditions)
			}
			if c.Status.KubernetesVersion == "" || len(c.Status.APIEnablements) == 0 {
				return fmt.Errorf("version %q, %d API groups", c.Status.KubernetesVersion, len(c.Status.APIEnablements))
			}
			if c.Status.NodeSummary == nil || c.Status.NodeSummary.ReadyNum != 2 {
				return fmt.Errorf("node summary %+v", c.Status.NodeSummary)
			}
			if c.Status.ResourceSummary == nil || c.Status.ResourceSummary.Allocatable.Cpu().Value() != 16 {
				return fmt.Errorf("resource summary %+v", c.Status.ResourceSummary)
			}
			return nil
		})
	}
}

// TestUnreachableMemberIsTainted stops a member: the hub marks it Unknown
// with the reason, then taints it so nothing new goes there.
func TestUnreachableMemberIsTainted(t *testing.T) {
	// Parallel (see parallelTests): only this test uses member4.
	t.Parallel()
	m := fleet.Member(flakyMember)
	if m == nil {
		t.Fatalf("no member %s", flakyMember)
	}
	eventually(t, flakyMember+" ready first", func() error { return clusterReady(flakyMember, metav1.ConditionTrue) })
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	eventually(t, flakyMember+" unreachable", func() error { return clusterReady(flakyMember, metav1.ConditionUnknown) })
	eventually(t, flakyMember+" tainted", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: flakyMember}, c); err != nil {
			return err
		}
		for _, taint := range c.Spec.Taints {
			if taint.Key == clusterv1alpha1.TaintClusterUnreachable && taint.Effect == "NoSchedule" {
				return nil
			}
		}
		return fmt.Errorf("taints %v", c.Spec.Taints)
	})
}

func clusterReady(name string, want metav1.ConditionStatus) error {
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		return err
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond == nil || cond.Status != want {
		return fmt.Errorf("Ready condition %+v, want %s", cond, want)
	}
	if want == metav1.ConditionUnknown && cond.Message == "" {
		return fmt.Errorf("Ready=Unknown without a message saying why")
	}
	return nil
}
