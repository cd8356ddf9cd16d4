package pull

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
	"sigs.k8s.io/yaml"

	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// A Service exported in the Pull member reaches the push member: the agent
// reports the export through its own execution namespace, the hub merges
// it, and the push member receives a ServiceImport with an IP and the Pull
// member's endpoints; the hub's verdict comes back to the ServiceExport
// through the agent. Unexported, the import leaves both members.
func TestPullMemberExportsAService(t *testing.T) {
	ctx := context.Background()
	const ns = "pull-mcs"
	createNamespace(t, ns)
	pull := memberCl[pullMember]
	// The workload runs in the Pull member (propagated from the hub), with
	// its Service; the ServiceExport is the member team's own.
	applyYAML(t, workload(ns, "web", 2, pullMember))
	eventually(t, "the MCS API in the Pull member", func() error {
		return pull.List(ctx, serviceExports())
	})
	eventually(t, "the workload's namespace in the Pull member", func() error {
		return pull.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	})
	svc := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {namespace: %s, name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, ns)
	for _, obj := range []string{svc, fmt.Sprintf("apiVersion: multicluster.x-k8s.io/v1beta1\nkind: ServiceExport\nmetadata: {namespace: %s, name: web}\n", ns)} {
		u := &unstructured.Unstructured{}
		if err := yamlInto(obj, u); err != nil {
			t.Fatal(err)
		}
		if err := pull.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, "the agent reports the export in its own execution namespace", func() error {
		es := &mcv1alpha1.ExportedService{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: names.ExecutionNamespace(pullMember), Name: mcv1alpha1.ExportedServiceName(ns, "web")}, es); err != nil {
			return err
		}
		if es.Spec.Cluster != pullMember || len(es.Spec.EndpointSlices) == 0 {
			return fmt.Errorf("export %+v", es.Spec)
		}
		return nil
	})
	eventually(t, "the push member imports the Service with the Pull member's endpoints", func() error {
		si := &unstructured.Unstructured{}
		si.SetAPIVersion(mcsv1beta1.GroupVersion.String())
		si.SetKind(mcsv1beta1.ServiceImportKindName)
		if err := memberCl[pushMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, si); err != nil {
			return err
		}
		ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		clusters, _, _ := unstructured.NestedSlice(si.Object, "status", "clusters")
		if len(ips) == 0 || len(clusters) != 1 {
			return fmt.Errorf("import ips %v, clusters %v", ips, clusters)
		}
		slices := &discoveryv1.EndpointSliceList{}
		if err := memberCl[pushMember].List(ctx, slices, client.InNamespace(ns), client.MatchingLabels{mcsv1beta1.LabelSourceCluster: pullMember}); err != nil {
			return err
		}
		n := 0
		for _, s := range slices.Items {
			n += len(s.Endpoints)
		}
		if n != 2 {
			return fmt.Errorf("%d endpoints of %s imported, want 2", n, pullMember)
		}
		return nil
	})
	eventually(t, "the agent writes the hub's verdict on the ServiceExport", func() error {
		se := &unstructured.Unstructured{}
		se.SetAPIVersion(mcsv1beta1.GroupVersion.String())
		se.SetKind(mcsv1beta1.ServiceExportKindName)
		if err := pull.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, se); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(se.Object, "status", "conditions")
		var got []metav1.Condition
		for _, c := range conds {
			m := c.(map[string]any)
			got = append(got, metav1.Condition{Type: fmt.Sprint(m["type"]), Status: metav1.ConditionStatus(fmt.Sprint(m["status"]))})
		}
		if !meta.IsStatusConditionTrue(got, "Valid") || !meta.IsStatusConditionTrue(got, "Ready") || !meta.IsStatusConditionFalse(got, "Conflict") {
			return fmt.Errorf("conditions %+v", got)
		}
		return nil
	})

	se := &unstructured.Unstructured{}
	se.SetAPIVersion(mcsv1beta1.GroupVersion.String())
	se.SetKind(mcsv1beta1.ServiceExportKindName)
	se.SetNamespace(ns)
	se.SetName("web")
	if err := pull.Delete(ctx, se); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{pushMember, pullMember} {
		eventually(t, "the import leaves "+m, func() error {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(mcsv1beta1.GroupVersion.String())
			list.SetKind(mcsv1beta1.ServiceImportKindName + "List")
			if err := memberCl[m].List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(list.Items) != 0 {
				return fmt.Errorf("%d ServiceImports left", len(list.Items))
			}
			return nil
		})
	}
}

func serviceExports() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(mcsv1beta1.GroupVersion.String())
	list.SetKind(mcsv1beta1.ServiceExportKindName + "List")
	return list
}

func yamlInto(doc string, u *unstructured.Unstructured) error {
	return yaml.Unmarshal([]byte(strings.TrimSpace(doc)), &u.Object)
}
