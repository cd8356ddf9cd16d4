package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
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

	sources := func(member string) ([]string, int, error) {
		si := &unstructured.Unstructured{}
		si.SetAPIVersion(mcsv1beta1.GroupVersion.String())
		si.SetKind(mcsv1beta1.ServiceImportKindName)
		if err := memberCl[member].Get(ctx, client.ObjectKey{Namespace: ns, Name: "checkout"}, si); err != nil {
			return nil, 0, err
		}
		list := &discoveryv1.EndpointSliceList{}
		if err := memberCl[member].List(ctx, list, client.InNamespace(ns), client.MatchingLabels{mcsv1beta1.LabelServiceName: "checkout"}); err != nil {
			return nil, 0, err
		}
		var from []string
		n := 0
		for _, s := range list.Items {
			if c := s.Labels[mcsv1beta1.LabelSourceCluster]; !slices.Contains(from, c) && len(s.Endpoints) > 0 {
				from = append(from, c)
			}
			n += len(s.Endpoints)
		}
		slices.Sort(from)
		return from, n, nil
	}
	expect := func(what, cluster string) {
		t.Helper()
		for _, m := range members {
			eventually(t, what+" in "+m, func() error {
				from, n, err := sources(m)
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
