package pull

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// A Pull cluster the hub has no address for receives a Deployment, runs it,
// and its health reaches the hub: all through its agent.
func TestPullMemberReceivesAndReportsHealthy(t *testing.T) {
	ctx := context.Background()
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: pullMember}, c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.SyncMode != clusterv1alpha1.Pull || c.Spec.APIEndpoint != "" || c.Spec.SecretRef != nil {
		t.Fatalf("cluster %s: syncMode %q, endpoint %q, secretRef %v; want Pull with neither endpoint nor credentials", pullMember, c.Spec.SyncMode, c.Spec.APIEndpoint, c.Spec.SecretRef)
	}
	eventually(t, "the agent reports the member Ready with its version and resources", func() error {
		if err := hub.Get(ctx, client.ObjectKey{Name: pullMember}, c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("not Ready: %+v", c.Status.Conditions)
		}
		if c.Status.KubernetesVersion == "" || c.Status.ResourceSummary == nil || len(c.Status.APIEnablements) == 0 {
			return fmt.Errorf("status incomplete: version %q, resources %v, %d APIs", c.Status.KubernetesVersion, c.Status.ResourceSummary, len(c.Status.APIEnablements))
		}
		return nil
	})

	const ns = "pull-basic"
	createNamespace(t, ns)
	applyYAML(t, workload(ns, "web", 2, pullMember))
	eventually(t, "the Deployment runs in the Pull member", func() error {
		d := &appsv1.Deployment{}
		if err := memberCl[pullMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("%d of 2 replicas ready", d.Status.ReadyReplicas)
		}
		return nil
	})
	eventually(t, "the hub sees it Healthy", func() error {
		_, rb, err := placement(ns, "web")
		if err != nil {
			return err
		}
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName == pullMember && s.Applied && s.Health == policyv1alpha1.ResourceHealthy {
				return nil
			}
		}
		return fmt.Errorf("aggregated status: %+v", rb.Status.AggregatedStatus)
	})
	eventually(t, "the template on the hub sums the member's ready replicas", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("hub template shows %d ready replicas", d.Status.ReadyReplicas)
		}
		return nil
	})

	// Deleting the template removes the object from the member: the agent
	// finalizes the Work.
	if err := hub.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Deployment is gone from the member", func() error {
		err := memberCl[pullMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
}
