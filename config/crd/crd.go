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
