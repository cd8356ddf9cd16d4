package memberapi

import (
	"slices"
	"testing"
)

// TestCRDs: the three CRDs decode, in apply order, each one served and
// stored at the version members use; ClusterProperty requires a value.
func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range crds {
		got = append(got, c.Name)
		if c.Kind != "CustomResourceDefinition" || c.APIVersion != "apiextensions.k8s.io/v1" {
			t.Errorf("%s: type %s %s", c.Name, c.APIVersion, c.Kind)
		}
	}
	want := []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io", "clusterproperties.about.k8s.io"}
	if !slices.Equal(got, want) {
		t.Fatalf("CRDs %v, want %v", got, want)
	}
	cp := crds[2]
	if cp.Spec.Scope != "Cluster" || len(cp.Spec.Versions) != 1 || cp.Spec.Versions[0].Name != AboutVersion {
		t.Fatalf("ClusterProperty CRD: scope %s, versions %+v", cp.Spec.Scope, cp.Spec.Versions)
	}
	spec := cp.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if !slices.Contains(spec.Required, "value") || spec.Properties["value"].Type != "string" {
		t.Errorf("ClusterProperty spec schema %+v: want a required string value", spec)
	}
	for _, c := range crds[:2] {
		served := false
		for _, v := range c.Spec.Versions {
			served = served || (v.Name == "v1beta1" && v.Served)
		}
		if !served {
			t.Errorf("%s does not serve v1beta1", c.Name)
		}
	}
}

func TestClusterProperties(t *testing.T) {
	props := ClusterProperties("member1", "fleet")
	got := map[string]string{}
	for _, p := range props {
		if p.GetAPIVersion() != "about.k8s.io/v1alpha1" || p.GetKind() != "ClusterProperty" {
			t.Errorf("%s: type %s %s", p.GetName(), p.GetAPIVersion(), p.GetKind())
		}
		got[p.GetName()] = p.Object["spec"].(map[string]any)["value"].(string)
	}
	if got[PropertyClusterID] != "member1" || got[PropertyClusterSet] != "fleet" || len(got) != 2 {
		t.Fatalf("properties %v", got)
	}
}
