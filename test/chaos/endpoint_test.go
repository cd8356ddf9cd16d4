package chaos

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/controllermanager"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// A member routed through a proxy while the controllers run is probed
// there: cutting the proxy makes it Unknown, putting it back Ready.
func TestEndpointChangeIsProbed(t *testing.T) {
	testenv.Heavy(t)
	env, err := fleetenv.StartFleet("endpoint", localfleet.Options{
		Fleet:       fleetenv.SmallFleet(1),
		Controllers: controllermanager.Options{Config: controllermanager.Config{ClusterStatus: fleetenv.FastProbes()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	p, err := fleetenv.RouteThroughProxy(ctx, env.Hub, "member1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ready := func(want metav1.ConditionStatus) func() error {
		return func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := env.Hub.Get(ctx, client.ObjectKey{Name: "member1"}, c); err != nil {
				return err
			}
			r := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			if r == nil || r.Status != want {
				return fmt.Errorf("endpoint %s, Ready %+v", c.Spec.APIEndpoint, r)
			}
			return nil
		}
	}
	fleetenv.Eventually(t, "member1 Ready through the proxy", ready(metav1.ConditionTrue))
	p.Set(fleetenv.LinkCut)
	fleetenv.Eventually(t, "member1 Unknown once cut off", ready(metav1.ConditionUnknown))
	p.Set(fleetenv.LinkUp)
	fleetenv.WaitClusterHealthy(t, env.Hub, "member1")
}
