package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// applyExample applies a file of examples/failover, the YAML
// docs/failover.md walks through.
func applyExample(t *testing.T, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "failover", name))
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(t, string(data))
}

// starve makes new pods of namespace ns in cluster impossible: a
// LimitRange caps containers at 10m CPU, so the API server refuses the
// ReplicaSet's pods (they request 100m). Deleting the running pods then
// leaves the Deployment without available replicas: Unhealthy. Only this
// namespace of this member is affected. It returns the undo.
func starve(t *testing.T, cluster, ns, app string) func() {
	t.Helper()
	ctx := context.Background()
	c := memberCl[cluster]
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "starve"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
		}}},
	}
	if err := c.Create(ctx, lr); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	return func() { _ = c.Delete(context.Background(), lr) }
}

// aggregated returns the binding's aggregated status item of cluster.
func aggregated(rb *workv1alpha1.ResourceBinding, cluster string) *workv1alpha1.AggregatedStatusItem {
	for i := range rb.Status.AggregatedStatus {
		if rb.Status.AggregatedStatus[i].ClusterName == cluster {
			return &rb.Status.AggregatedStatus[i]
		}
	}
	return nil
}

// waitHealthyOn waits until the binding's copy on cluster is Healthy.
func waitHealthyOn(t *testing.T, ns, name, kind, cluster string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s/%s Healthy on %s", ns, name, cluster), func() error {
		rb, err := binding(ns, name, kind)
		if err != nil {
			return err
		}
		if item := aggregated(rb, cluster); item == nil || item.Health != policyv1alpha1.ResourceHealthy {
			return fmt.Errorf("aggregated status %+v", rb.Status.AggregatedStatus)
		}
		return nil
	})
}

// waitEvicted waits until cluster left the binding's active targets with a
// history entry, and returns the binding.
func waitEvicted(t *testing.T, ns, name, kind, cluster string) *workv1alpha1.ResourceBinding {
	t.Helper()
	var rb *workv1alpha1.ResourceBinding
	eventually(t, fmt.Sprintf("%s/%s evicted from %s", ns, name, cluster), func() error {
		var err error
		if rb, err = binding(ns, name, kind); err != nil {
			return err
		}
		if _, active := targets(rb)[cluster]; active {
			return fmt.Errorf("still a target: %+v", rb.Spec.Clusters)
		}
		for _, h := range rb.Spec.EvictionHistory {
			if h.ClusterName == cluster {
				return nil
			}
		}
		return fmt.Errorf("no history entry: %+v", rb.Spec.EvictionHistory)
	})
	return rb
}

// deploymentAvailable checks a member runs the Deployment fully available.
func deploymentAvailable(cluster string, key client.ObjectKey) error {
	d := &appsv1.Deployment{}
	if err := inMember(cluster, key, d); err != nil {
		return err
	}
	if d.Spec.Replicas == nil || d.Status.AvailableReplicas != *d.Spec.Replicas {
		return fmt.Errorf("%d of %v available in %s", d.Status.AvailableReplicas, d.Spec.Replicas, cluster)
	}
	return nil
}
