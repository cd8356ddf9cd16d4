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

// The About API.
const (
	AboutGroup   = "about.k8s.io"
	AboutVersion = "v1alpha1"
	// PropertyClusterID names the property holding the cluster's ID.
	PropertyClusterID = "cluster.clusterset.k8s.io"
	// PropertyClusterSet names the property holding the ClusterSet's ID.
	PropertyClusterSet = "clusterset.k8s.io"
)

//go:embed clusterproperty.yaml
var clusterPropertyCRD []byte

// CRDs are the CRDs a member needs, in apply order: ServiceExport,
// ServiceImport, ClusterProperty.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []struct {
		name string
		data []byte
	}{{"ServiceExport", mcscrd.ServiceExportCRD}, {"ServiceImport", mcscrd.ServiceImportCRD}, {"ClusterProperty", clusterPropertyCRD}} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(f.data, crd); err != nil {
			return nil, fmt.Errorf("decoding the %s CRD: %w", f.name, err)
		}
		crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		out = append(out, crd)
	}
	return out, nil
}

// ClusterProperties are the two properties the MCS API reads: the
// cluster's ID and the ClusterSet's.
func ClusterProperties(clusterID, clusterSetID string) []*unstructured.Unstructured {
	prop := func(name, value string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"value": value}}}
		u.SetAPIVersion(AboutGroup + "/" + AboutVersion)
		u.SetKind("ClusterProperty")
		u.SetName(name)
		return u
	}
	return []*unstructured.Unstructured{prop(PropertyClusterID, clusterID), prop(PropertyClusterSet, clusterSetID)}
}
