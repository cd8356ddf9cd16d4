package reschedule_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// placed is what a restart must not change about a binding.
type placed struct {
	Clusters        []workv1alpha1.TargetCluster
	LastScheduled   metav1.Time
	ResourceVersion string
}

// snapshotPlaced reads the namespace's bindings, requiring count of them,
// all scheduled.
func snapshotPlaced(ns string, count int) (map[string]placed, error) {
	list := &workv1alpha1.ResourceBindingList{}
	if err := cli.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	if len(list.Items) != count {
		return nil, fmt.Errorf("%d bindings, want %d", len(list.Items), count)
	}
	out := map[string]placed{}
	for _, b := range list.Items {
		if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionScheduled) || b.Status.LastScheduledTime == nil {
			return nil, fmt.Errorf("%s not scheduled", b.Name)
		}
		out[b.Name] = placed{Clusters: b.Spec.Clusters, LastScheduled: *b.Status.LastScheduledTime, ResourceVersion: b.ResourceVersion}
	}
	return out, nil
}

// TestRestartMovesNothing places 100 Deployments, restarts the controller
// manager and checks that nothing was written: every binding keeps its
// targets, lastScheduledTime and resourceVersion.
func TestRestartMovesNothing(t *testing.T) {
	suite.Hub(t)
	const ns, count = "restart", 100
	namespace(t, ns)
	var yaml strings.Builder
	yaml.WriteString(policyYAML(ns, "all", dividedOver(fleet...)))
	for i := range count {
		yaml.WriteString("---" + deploymentYAML(ns, fmt.Sprintf("app-%03d", i), 1+i%7, "nginx:1.27"))
	}
	apply(t, yaml.String())

	// Settled: every binding placed and nothing written for a while.
	var before map[string]placed
	eventually(t, "100 bindings placed and settled", func() error {
		first, err := snapshotPlaced(ns, count)
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		if before, err = snapshotPlaced(ns, count); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(first, before) {
			return fmt.Errorf("bindings still changing")
		}
		return nil
	})

	start := time.Now()
	if err := controllers.Stop(); err != nil {
		t.Fatal(err)
	}
	var err error
	if controllers, err = startManager(); err != nil {
		t.Fatal(err)
	}
	// The new manager lists every binding, template and policy at start
	// and reconciles them all; give it time to do so.
	time.Sleep(5 * time.Second)
	after, err := snapshotPlaced(ns, count)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for name, b := range before {
		if a := after[name]; !equality.Semantic.DeepEqual(a, b) {
			moved++
			if moved <= 5 {
				t.Errorf("%s changed across the restart: %+v -> %+v", name, b, a)
			}
		}
	}
	if moved > 0 {
		t.Errorf("%d of %d bindings changed across the restart", moved, count)
	}
	t.Logf("restarted and checked %d bindings in %s", count, time.Since(start).Round(time.Millisecond))
}
