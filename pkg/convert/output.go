package convert

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// WriteYAML writes the objects as one multi-document YAML stream. Keys are
// sorted, so the same objects always give the same bytes.
func WriteYAML(w io.Writer, objs []*unstructured.Unstructured) error {
	var b bytes.Buffer
	for i, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(data)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteDir writes each object to a file of its own in dir (created if
// missing), named by FileName, and returns the files written.
func WriteDir(dir string, objs []*unstructured.Unstructured) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := make([]string, 0, len(objs))
	for _, obj := range objs {
		var b bytes.Buffer
		if err := WriteYAML(&b, []*unstructured.Unstructured{obj}); err != nil {
			return files, err
		}
		f := filepath.Join(dir, FileName(obj))
		if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// FileName is kind_namespace_name.yaml (kind_name.yaml for a cluster-scoped
// object), in lower case: a namespace has no underscore and neither has a
// name, so no two objects share a file.
func FileName(obj *unstructured.Unstructured) string {
	parts := []string{strings.ToLower(obj.GetKind())}
	if ns := obj.GetNamespace(); ns != "" {
		parts = append(parts, ns)
	}
	parts = append(parts, obj.GetName())
	return strings.Join(parts, "_") + ".yaml"
}
