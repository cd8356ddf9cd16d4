package fleetenv

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// WaitClusterHealthy waits until the Cluster is Ready and carries neither
// the not-ready nor the unreachable taint. A test that takes a member away
// calls it in its cleanup, and a test that needs the member calls it first,
// so that neither depends on the order the suite's tests run in.
func WaitClusterHealthy(t testing.TB, c client.Client, name string) {
	t.Helper()
	Eventually(t, name+" Ready and untainted", func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, cl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("not Ready: %v", cl.Status.Conditions)
		}
		for _, taint := range cl.Spec.Taints {
			if taint.Key == clusterv1alpha1.TaintClusterNotReady || taint.Key == clusterv1alpha1.TaintClusterUnreachable {
				return fmt.Errorf("still tainted: %v", cl.Spec.Taints)
			}
		}
		return nil
	})
}
