package fleetbench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// sharedOptions are the runs on the shared fleet's members: two of two
// nodes each, the fleet Run starts for them.
var sharedOptions = Options{Members: 2}

// shared is the fleet TestRunSmallFleet, TestRunRolloutSmall and
// TestSoakSmall run on, started by the first of them: the hub, every
// controller, and the members Run starts for sharedOptions. The rollout
// and the soak need a hub and simulated Pull clusters, which they register
// on it. TestRunFiniteCapacity starts a fleet of its own: its members'
// nodes are sized from its load (room for 60% of its replicas), and what
// it checks (no replica placed beyond a member's empty nodes, no pod left
// Pending) holds only on nodes no other run's pods take room on.
var shared = fleetenv.Shared{Suite: "fleetbench", Options: func() localfleet.Options {
	return localfleet.Options{Fleet: sharedOptions.fleet()}
}}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Stop()
	os.Exit(code)
}

// sharedRuns numbers the runs on the shared fleet.
var sharedRuns atomic.Int32

// onShared is where a run named name goes on the shared fleet: a hub
// namespace and simulated clusters of its own, numbered so that -count
// runs it again. The context ends after the test's cleanup, which waits
// until the run's templates, bindings, Works and simulated clusters are
// gone: the next run finds the fleet as the first did.
func onShared(t *testing.T, name string) (context.Context, on) {
	t.Helper()
	env := shared.Fleet(t)
	id := fmt.Sprintf("%s-%d", name, sharedRuns.Add(1))
	where := on{fleet: env.Fleet, members: sharedOptions.fleet(), ns: id, simPrefix: simPrefix + id + "-"}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		// The simulator releases the Works of its clusters as they go:
		// it stops last.
		defer cancel()
		removeRun(t, env.Hub, where)
	})
	return ctx, where
}

// removeRun deletes what the run of where made on the shared fleet and
// waits until it is gone.
func removeRun(t *testing.T, hub client.Client, where on) {
	t.Helper()
	ctx := context.Background()
	if !removeTemplates(t, hub, where.ns) {
		return
	}
	fleetenv.Eventually(t, "the simulated clusters of "+where.ns+" gone", func() error {
		var clusters clusterv1alpha1.ClusterList
		if err := hub.List(ctx, &clusters); err != nil {
			return err
		}
		left := 0
		for i := range clusters.Items {
			c := &clusters.Items[i]
			if !strings.HasPrefix(c.Name, where.simPrefix) {
				continue
			}
			left++
			if c.DeletionTimestamp.IsZero() {
				if err := hub.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
		}
		if left > 0 {
			return fmt.Errorf("%d simulated clusters left", left)
		}
		return nil
	})
}

// removeTemplates deletes the templates (Deployments, ConfigMaps) and the
// policies of namespaces nss, and waits until their bindings and Works are
// gone; false when the deletion failed. All at once: a run that places
// from a namespace per placement has many.
func removeTemplates(t *testing.T, hub client.Client, nss ...string) bool {
	t.Helper()
	ctx := context.Background()
	in := map[string]bool{}
	for _, ns := range nss {
		in[ns] = true
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}, &policyv1alpha1.PropagationPolicy{}} {
			if err := hub.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
				t.Errorf("deleting the %T of %s: %v", obj, ns, err)
				return false
			}
		}
	}
	fleetenv.Eventually(t, fmt.Sprintf("the bindings and Works of %s gone", strings.Join(nss, ", ")), func() error {
		var rbs workv1alpha1.ResourceBindingList
		if err := hub.List(ctx, &rbs); err != nil {
			return err
		}
		var works workv1alpha1.WorkList
		if err := hub.List(ctx, &works, client.HasLabels{workv1alpha1.LabelBindingNamespace}); err != nil {
			return err
		}
		left := 0
		for i := range rbs.Items {
			if in[rbs.Items[i].Namespace] {
				left++
			}
		}
		for i := range works.Items {
			if in[works.Items[i].Labels[workv1alpha1.LabelBindingNamespace]] {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d bindings and Works left", left)
		}
		return nil
	})
	return true
}
