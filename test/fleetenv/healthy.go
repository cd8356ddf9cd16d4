package fleetenv

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// WaitClusterHealthy waits until cluster name is Ready and carries none of
// the taints Shepherd puts on a failing member: what a test that took a
// member away waits for in its cleanup, so that the tests after it start
// from a healthy fleet whatever their order.
func WaitClusterHealthy(t testing.TB, hub client.Client, name string) {
	t.Helper()
	Eventually(t, name+" Ready and untainted", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("not Ready: %v", meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady))
		}
		for _, tn := range c.Spec.Taints {
			if tn.Key == clusterv1alpha1.TaintClusterNotReady || tn.Key == clusterv1alpha1.TaintClusterUnreachable {
				return fmt.Errorf("tainted %s:%s", tn.Key, tn.Effect)
			}
		}
		return nil
	})
}

// RouteThroughProxy points Push member name's endpoint on the hub at a new
// Proxy in front of its API server, so that a test can cut, slow down or
// break the hub's path to it without stopping it.
func RouteThroughProxy(ctx context.Context, hub client.Client, name string) (*Proxy, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil, err
	}
	u, err := url.Parse(c.Spec.APIEndpoint)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: endpoint %q: %w", name, c.Spec.APIEndpoint, err)
	}
	p, err := StartProxy(u.Host)
	if err != nil {
		return nil, err
	}
	patch := client.MergeFrom(c.DeepCopy())
	c.Spec.APIEndpoint = "https://" + p.Addr()
	if err := hub.Patch(ctx, c, patch); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}
