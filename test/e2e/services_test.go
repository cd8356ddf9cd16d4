package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestServiceFollowsTheWorkload applies the multi-cluster Services example:
// a workload, its Service and a ServiceExport propagated together to
// member1. Every member imports the Service with member1's endpoints. When
// the policy moves the workload to member2, the import's endpoints move
// with it, and the ServiceImport stays in every member throughout.
func TestServiceFollowsTheWorkload(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("../../examples/multicluster-services/export-with-workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The example's image is a placeholder; the simulated members run any.
	applyYAML(t, string(data))
	const ns = "shop"
	removeWorkloads(t, ns, members...)

	expect := func(what, cluster string) {
		t.Helper()
		for _, m := range members {
			eventually(t, what+" in "+m, func() error {
				from, n, err := importedFrom(ctx, m, ns, "checkout")
				if err != nil {
					return err
				}
				if strings.Join(from, ",") != cluster || n != 2 {
					return fmt.Errorf("endpoints from %v (%d), want 2 from %s", from, n, cluster)
				}
				return nil
			})
		}
	}
	expect("member1's endpoints imported", "member1")

	applyYAML(t, strings.Replace(string(data), "clusterNames: [member1]", "clusterNames: [member2]", 1))
	expect("the endpoints moved with the workload", "member2")
}

// importedFrom reads member's import of the Service ns/name: the clusters
// whose endpoints its EndpointSlices carry, sorted, and how many ready
// endpoints they hold.
func importedFrom(ctx context.Context, member, ns, name string) ([]string, int, error) {
	si := &unstructured.Unstructured{}
	si.SetAPIVersion(mcsv1beta1.GroupVersion.String())
	si.SetKind(mcsv1beta1.ServiceImportKindName)
	if err := memberCl[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, si); err != nil {
		return nil, 0, err
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := memberCl[member].List(ctx, list, client.InNamespace(ns), client.MatchingLabels{mcsv1beta1.LabelServiceName: name}); err != nil {
		return nil, 0, err
	}
	var from []string
	n := 0
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready {
				continue
			}
			if c := s.Labels[mcsv1beta1.LabelSourceCluster]; !slices.Contains(from, c) {
				from = append(from, c)
			}
			n++
		}
	}
	slices.Sort(from)
	return from, n, nil
}

// TestImportFollowsAnApplicationFailover: checkout runs on member1 with
// application failover to member2; its Service and ServiceExport are in
// both (exported wherever it may run). When checkout turns Unhealthy on
// member1 and fails over, member3's import follows: member2's endpoints
// within 10 s of the new copy being available, member1's gone within 10 s
// of the old copy leaving.
func TestImportFollowsAnApplicationFailover(t *testing.T) {
	ctx := context.Background()
	const ns = "shop-failover"
	createNamespace(t, ns)
	removeWorkloads(t, ns, members...)
	applyYAML(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec:
      containers:
      - {name: checkout, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: %[1]s}
spec:
  selector: {app: checkout}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: checkout, namespace: %[1]s}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: checkout, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: checkout}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Graciously
      gracePeriodSeconds: 60
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    preferredClusterAffinities:
    - {weight: 100, preference: {clusterNames: [member1]}}
    spreadConstraints:
    - {spreadByField: cluster, minGroups: 1, maxGroups: 1}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: checkout-service, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service, name: checkout}
  - {apiVersion: multicluster.x-k8s.io/v1beta1, kind: ServiceExport, name: checkout}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
`, ns))
	key := client.ObjectKey{Namespace: ns, Name: "checkout"}
	eventually(t, "checkout available on member1", func() error { return deploymentAvailable("member1", key) })
	waitHealthyOn(t, ns, "checkout", "Deployment", "member1")
	eventually(t, "member3 imports member1's endpoints", func() error {
		from, n, err := importedFrom(ctx, "member3", ns, "checkout")
		if err != nil {
			return err
		}
		if strings.Join(from, ",") != "member1" || n != 2 {
			return fmt.Errorf("endpoints from %v (%d), want 2 from member1", from, n)
		}
		return nil
	})

	defer starve(t, "member1", ns, "checkout")()
	waitEvicted(t, ns, "checkout", "Deployment", "member1")
	eventually(t, "checkout available on member2", func() error { return deploymentAvailable("member2", key) })
	testenv.Eventually(t, 10*time.Second, "member3 imports member2's endpoints", func() error {
		from, n, err := importedFrom(ctx, "member3", ns, "checkout")
		if err != nil {
			return err
		}
		if !slices.Contains(from, "member2") || n < 2 {
			return fmt.Errorf("ready endpoints from %v (%d), want member2's 2", from, n)
		}
		return nil
	})
	eventually(t, "the old copy leaves member1", func() error { return goneFromMember("member1", key, &appsv1.Deployment{}) })
	testenv.Eventually(t, 10*time.Second, "member3's import without member1's endpoints", func() error {
		from, n, err := importedFrom(ctx, "member3", ns, "checkout")
		if err != nil {
			return err
		}
		if strings.Join(from, ",") != "member2" || n != 2 {
			return fmt.Errorf("ready endpoints from %v (%d), want only member2's 2", from, n)
		}
		return nil
	})
}
