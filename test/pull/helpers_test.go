package pull

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// eventually is the suites' one wait (fleetenv).
var eventually = fleetenv.Eventually

// applyYAML server-side applies a YAML stream to the hub.
func applyYAML(t *testing.T, yaml string) { t.Helper(); fleetenv.ApplyYAML(t, hub, "pull-tests", yaml) }

func createNamespace(t *testing.T, name string) { t.Helper(); fleetenv.CreateNamespace(t, hub, name) }

// workload is a Deployment and a PropagationPolicy placing it on clusters
// (Divided by static equal weights).
func workload(ns, name string, replicas int, clusters ...string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - {name: app, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [%[4]s]}
    replicaScheduling: {replicaSchedulingType: Divided}
`, ns, name, replicas, strings.Join(clusters, ", "))
}

// placement is the binding's replicas per active target cluster (targets
// being removed, state Unscheduled, are left out).
func placement(ns, name string) (map[string]int32, *workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, rb); err != nil {
		return nil, nil, err
	}
	return fleetenv.ActiveTargets(rb.Spec.Clusters), rb, nil
}

// newProxy is a proxy in front of target (host:port) that stands for the
// network between an agent and the hub; it closes when the test ends.
func newProxy(t *testing.T, target string) *fleetenv.Proxy {
	t.Helper()
	p, err := fleetenv.StartProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
