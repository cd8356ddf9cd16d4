package detector

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// TestDesiredBindingWorkloadAffinityGroups: the detector resolves the
// policy's workloadAffinity against the template's labels into the
// binding's spec.workloadAffinityGroups, as "<key>=<value>"; a template
// without the label is in no group, and a cluster-scoped template never
// is (groups never cross namespaces).
func TestDesiredBindingWorkloadAffinityGroups(t *testing.T) {
	terms := &policyv1alpha1.WorkloadAffinity{
		Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "example.com/shop"},
		AntiAffinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "example.com/ha-pair"},
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   *workv1alpha1.WorkloadAffinityGroups
	}{
		{"both labels", map[string]string{"example.com/shop": "web", "example.com/ha-pair": "ingest", "app": "x"},
			&workv1alpha1.WorkloadAffinityGroups{AffinityGroup: "example.com/shop=web", AntiAffinityGroup: "example.com/ha-pair=ingest"}},
		{"one label", map[string]string{"example.com/ha-pair": "ingest"},
			&workv1alpha1.WorkloadAffinityGroups{AntiAffinityGroup: "example.com/ha-pair=ingest"}},
		{"an empty value is a value", map[string]string{"example.com/shop": ""},
			&workv1alpha1.WorkloadAffinityGroups{AffinityGroup: "example.com/shop="}},
		{"no label", map[string]string{"app": "x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dividedPolicy()
			p.Spec.Placement.WorkloadAffinity = terms
			tmpl := deploymentTemplate(2)
			tmpl.SetLabels(tc.labels)
			b, err := desiredBinding(interpreter.New(), tmpl, true, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := b.GetBindingSpec().WorkloadAffinityGroups
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("workloadAffinityGroups = %+v, want %+v", got, tc.want)
			}
			// A change of group is a change the detector writes.
			other := dividedPolicy()
			other.Spec.Placement.WorkloadAffinity = terms
			plain := deploymentTemplate(2)
			was, err := desiredBinding(interpreter.New(), plain, true, other, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ownedFieldsEqual(was, b) != (tc.want == nil) {
				t.Errorf("ownedFieldsEqual with and without the template's groups = %v", ownedFieldsEqual(was, b))
			}
		})
	}

	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "reader", "uid": "u2", "labels": map[string]any{"example.com/shop": "web"}},
	}}
	cp := cpp("roles", 0)
	cp.GetPropagationSpec().Placement.WorkloadAffinity = terms
	b, err := desiredBinding(interpreter.New(), role, false, cp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := b.GetBindingSpec().WorkloadAffinityGroups; g != nil {
		t.Errorf("a cluster-scoped template got groups %+v", g)
	}
}
