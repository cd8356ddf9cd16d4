// Package crd embeds Shepherd's generated CustomResourceDefinitions so the
// binary can install them without a checkout (controller-gen writes bases/).
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// mcsServiceExport is the MCS API's ServiceExport CRD, copied from
// sigs.k8s.io/mcs-api by `make generate` (a test keeps it equal to the
// module's).
//
//go:embed mcs/multicluster.x-k8s.io_serviceexports.yaml
var mcsServiceExport []byte

// Hub returns every CRD the hub serves: Shepherd's (CRDs) and the MCS API's
// ServiceExport, whose objects are templates there, propagated with the
// Services they export.
func Hub() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := CRDs()
	if err != nil {
		return nil, err
	}
	se := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(mcsServiceExport, se); err != nil {
		return nil, fmt.Errorf("decoding the ServiceExport CRD: %w", err)
	}
	return append(out, se), nil
}

// CRDs returns every Shepherd CRD, sorted by name.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", f, err)
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
