package memberapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/shepherd-io/shepherd/pkg/mcs/memberapi"
)

// TestCRDs: the three CRDs decode in apply order, pass the apiserver's own
// CRD validation (run here without an apiserver), and the ClusterProperty
// CRD is the About API's.
func TestCRDs(t *testing.T) {
	crds, err := memberapi.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range crds {
		got = append(got, c.Name)
		if c.APIVersion != "apiextensions.k8s.io/v1" || c.Kind != "CustomResourceDefinition" {
			t.Errorf("%s: type %s %s", c.Name, c.APIVersion, c.Kind)
		}
		internal := toInternal(t, c)
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) != 0 {
			t.Errorf("%s is not a valid CRD: %v", c.Name, errs.ToAggregate())
		}
	}
	want := []string{"serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io", memberapi.ClusterPropertyCRDName}
	if !slices.Equal(got, want) {
		t.Fatalf("CRDs %v, want %v", got, want)
	}
	// The MCS types are used at v1alpha1, the version every MCS
	// implementation serves.
	for _, c := range crds[:2] {
		if !slices.ContainsFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return v.Name == "v1alpha1" && v.Served
		}) {
			t.Errorf("%s does not serve v1alpha1", c.Name)
		}
	}

	cp := crds[2]
	if cp.Name != "clusterproperties.about.k8s.io" || cp.Spec.Group != "about.k8s.io" ||
		cp.Spec.Names.Kind != "ClusterProperty" || cp.Spec.Names.Plural != "clusterproperties" ||
		cp.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("ClusterProperty CRD %s: group %s, names %+v, scope %s", cp.Name, cp.Spec.Group, cp.Spec.Names, cp.Spec.Scope)
	}
	if len(cp.Spec.Versions) != 1 || cp.Spec.Versions[0].Name != "v1alpha1" ||
		!cp.Spec.Versions[0].Served || !cp.Spec.Versions[0].Storage {
		t.Fatalf("ClusterProperty versions %+v, want v1alpha1 served and stored", cp.Spec.Versions)
	}
	var columns []string
	for _, c := range cp.Spec.Versions[0].AdditionalPrinterColumns {
		columns = append(columns, c.Name)
	}
	if !slices.Equal(columns, []string{"Value", "Age"}) {
		t.Errorf("printer columns %v, want [Value Age]", columns)
	}
}

// TestClusterPropertySchema: the schema requires a non-empty string
// spec.value, and the two properties ClusterProperties returns pass it.
func TestClusterPropertySchema(t *testing.T) {
	crds, err := memberapi.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := apiextensions.GetSchemaForVersion(toInternal(t, crds[2]), memberapi.AboutVersion)
	if err != nil || schema == nil {
		t.Fatalf("no v1alpha1 schema: %v", err)
	}
	validator, _, err := validation.NewSchemaValidator(schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}

	props := memberapi.ClusterProperties("member1", "fleet")
	values := map[string]string{}
	for _, p := range props {
		if p.GetAPIVersion() != "about.k8s.io/v1alpha1" || p.GetKind() != "ClusterProperty" {
			t.Errorf("%s: type %s %s", p.GetName(), p.GetAPIVersion(), p.GetKind())
		}
		if errs := validation.ValidateCustomResource(nil, p.Object, validator); len(errs) != 0 {
			t.Errorf("%s is invalid: %v", p.GetName(), errs.ToAggregate())
		}
		values[p.GetName()] = p.Object["spec"].(map[string]any)["value"].(string)
	}
	if len(values) != 2 || values["cluster.clusterset.k8s.io"] != "member1" || values["clusterset.k8s.io"] != "fleet" {
		t.Errorf("properties %v, want cluster.clusterset.k8s.io=member1 and clusterset.k8s.io=fleet", values)
	}

	for name, spec := range map[string]any{
		"no spec":     nil,
		"no value":    map[string]any{},
		"empty value": map[string]any{"value": ""},
		"a number":    map[string]any{"value": int64(1)},
		"too long":    map[string]any{"value": strings.Repeat("x", 128001)},
	} {
		obj := map[string]any{
			"apiVersion": "about.k8s.io/v1alpha1",
			"kind":       "ClusterProperty",
			"metadata":   map[string]any{"name": "cluster.clusterset.k8s.io"},
		}
		if spec != nil {
			obj["spec"] = spec
		}
		if errs := validation.ValidateCustomResource(nil, obj, validator); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// toInternal defaults and converts a CRD the way the apiserver does before
// validating it.
func toInternal(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensions.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	versioned := crd.DeepCopy()
	scheme.Default(versioned)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(versioned, internal, nil); err != nil {
		t.Fatalf("converting %s: %v", crd.Name, err)
	}
	return internal
}
