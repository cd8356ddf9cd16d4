// Package memberapi holds the APIs multi-cluster Services need in every
// member: the MCS API's ServiceExport and ServiceImport CRDs (the upstream
// ones, from sigs.k8s.io/mcs-api) and the About API's ClusterProperty CRD,
// with the two ClusterProperties that name the cluster and its ClusterSet.
package memberapi

import (
	_ "embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	mcscrd "sigs.k8s.io/mcs-api/config/crd"
	"sigs.k8s.io/yaml"
)

// The About API. Its ClusterProperty CRD is written by hand
// (clusterproperty.yaml): the API has no Go module to take it from.
const (
	AboutGroup   = "about.k8s.io"
	AboutVersion = "v1alpha1"
	// ClusterPropertyKind and ClusterPropertyResource name the type; a
	// ClusterProperty is cluster-scoped and named by the property.
	ClusterPropertyKind     = "ClusterProperty"
	ClusterPropertyResource = "clusterproperties"
	// ClusterPropertyCRDName is the CRD's name, <plural>.<group>.
	ClusterPropertyCRDName = ClusterPropertyResource + "." + AboutGroup
	// PropertyClusterID names the property holding the cluster's ID,
	// unique within its ClusterSet.
	PropertyClusterID = "cluster.clusterset.k8s.io"
	// PropertyClusterSet names the property holding the ClusterSet's ID.
	PropertyClusterSet = "clusterset.k8s.io"
)

//go:embed clusterproperty.yaml
var clusterPropertyCRD []byte

// CRDs are the CRDs a member needs, in apply order: ServiceExport,
// ServiceImport, ClusterProperty. They are decoded afresh on every call, so
// a caller may modify them.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	sources := []struct {
		kind string
		data []byte
	}{
		{"ServiceExport", mcscrd.ServiceExportCRD},
		{"ServiceImport", mcscrd.ServiceImportCRD},
		{ClusterPropertyKind, clusterPropertyCRD},
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(sources))
	for _, s := range sources {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		// Strict: a misspelt field in the hand-written CRD would otherwise
		// be dropped silently and the member would get a different API.
		if err := yaml.UnmarshalStrict(s.data, crd); err != nil {
			return nil, fmt.Errorf("decoding the %s CRD: %w", s.kind, err)
		}
		if crd.Spec.Names.Kind != s.kind {
			return nil, fmt.Errorf("the %s CRD defines kind %q", s.kind, crd.Spec.Names.Kind)
		}
		// Callers send the CRDs as manifests, which need their type.
		crd.APIVersion = apiextensionsv1.SchemeGroupVersion.String()
		crd.Kind = "CustomResourceDefinition"
		out = append(out, crd)
	}
	return out, nil
}

// ClusterProperties are the two properties the MCS API reads in a member:
// the cluster's ID and the ClusterSet's.
func ClusterProperties(clusterID, clusterSetID string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		clusterProperty(PropertyClusterID, clusterID),
		clusterProperty(PropertyClusterSet, clusterSetID),
	}
}

func clusterProperty(name, value string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"value": value}}}
	u.SetAPIVersion(AboutGroup + "/" + AboutVersion)
	u.SetKind(ClusterPropertyKind)
	u.SetName(name)
	return u
}
