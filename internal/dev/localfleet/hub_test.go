package localfleet_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestRestartHub: the hub stopped and started again keeps what it stored,
// answers at the same address, and the fleet around it goes on: the
// controllers, which lost every watch, act on what is written after.
func TestRestartHub(t *testing.T) {
	testenv.Heavy(t)
	env, err := fleetenv.StartFleet("restarthub", localfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	ctx, hub := context.Background(), env.Hub
	url := env.Fleet.Hub.URL()
	fleetenv.CreateNamespace(t, hub, "kept")
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kept", Name: "before"}, Data: map[string]string{"k": "v"}}
	if err := hub.Create(ctx, before); err != nil {
		t.Fatal(err)
	}

	if err := env.Fleet.RestartHub(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := env.Fleet.Hub.URL(); got != url {
		t.Errorf("the hub came back at %s, was %s", got, url)
	}
	select {
	case <-env.Fleet.Done():
		t.Fatalf("the fleet stopped with the hub: %v", env.Fleet.Wait())
	default:
	}
	fleetenv.Eventually(t, "the ConfigMap stored before the restart", func() error {
		return hub.Get(ctx, client.ObjectKeyFromObject(before), &corev1.ConfigMap{})
	})
	fleetenv.ApplyYAML(t, hub, "test", `apiVersion: v1
kind: ConfigMap
metadata: {name: after, namespace: kept}
data: {k: v}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: after, namespace: kept}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: after}]
`)
	fleetenv.Eventually(t, "the controllers bind what is written after the restart", func() error {
		return hub.Get(ctx, client.ObjectKey{Namespace: "kept", Name: names.BindingName("ConfigMap", "after")}, &workv1alpha1.ResourceBinding{})
	})
	if err := env.Fleet.RestartHub(0); err != nil {
		t.Errorf("a second restart: %v", err)
	}
}
