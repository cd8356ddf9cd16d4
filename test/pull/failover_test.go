package pull

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// A Pull cluster whose agent stops is failed over like an unreachable push
// member: Unknown, tainted NoSchedule, then NoExecute, and its replicas
// move to the push member. The test ends once the Pull member is back
// and untainted, so the tests after it start from a healthy fleet.
func TestPullClusterFailsOverWhenItsAgentStops(t *testing.T) {
	const ns = "pull-failover"
	createNamespace(t, ns)
	applyYAML(t, workload(ns, "web", 4, pushMember, pullMember))
	eventually(t, "the workload is divided over both members", func() error {
		p, _, err := placement(ns, "web")
		if err != nil {
			return err
		}
		if p[pullMember] == 0 || p[pushMember] == 0 {
			return fmt.Errorf("placement %v", p)
		}
		return nil
	})
	if err := fleet.StopAgent(pullMember); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fleet.StartAgent(pullMember, agentOpts)
		fleetenv.WaitClusterHealthy(t, hub, pullMember)
	})
	eventually(t, "the Pull cluster is tainted NoExecute", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: pullMember}, c); err != nil {
			return err
		}
		for _, tn := range c.Spec.Taints {
			if tn.Key == clusterv1alpha1.TaintClusterUnreachable && tn.Effect == corev1.TaintEffectNoExecute {
				return nil
			}
		}
		return fmt.Errorf("taints %v", c.Spec.Taints)
	})
	eventually(t, "every replica moved to the push member", func() error {
		p, _, err := placement(ns, "web")
		if err != nil {
			return err
		}
		if len(p) != 1 || p[pushMember] != 4 {
			return fmt.Errorf("placement %v", p)
		}
		return nil
	})
	if err := fleet.StartAgent(pullMember, agentOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the taints go when the agent is back", func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := hub.Get(context.Background(), client.ObjectKey{Name: pullMember}, c); err != nil {
			return err
		}
		if len(c.Spec.Taints) > 0 {
			return fmt.Errorf("taints %v", c.Spec.Taints)
		}
		return nil
	})
}
