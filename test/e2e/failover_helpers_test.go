package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
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

// starve makes the copy of app in namespace ns of cluster Unhealthy (see
// fleetenv.Starve) and returns the undo.
func starve(t *testing.T, cluster, ns, app string) func() {
	t.Helper()
	return fleetenv.Starve(t, memberCl[cluster], ns, app)
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
