package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kustomizationFile is the only name a kustomization may have here.
const kustomizationFile = "kustomization.yaml"

// kustomization is the part of kustomize's Kustomization that config/
// uses. Decoding is strict: any other field is refused rather than
// ignored, so what Render returns is what kustomize would build.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources,omitempty"`
	Images     []Image  `json:"images,omitempty"`
}

// Image is an entry of a kustomization's images: containers whose image
// is Name (with any tag or digest) get NewName, NewTag and Digest instead.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// Render builds the kustomization in directory dir of fsys as kustomize
// does for the fields it supports: every file and directory of resources
// in order (a directory is a kustomization itself), then images on what
// they produced. It refuses an unsupported field, a resource outside fsys
// and two objects of the same kind, namespace and name.
func Render(fsys fs.FS, dir string) ([]*unstructured.Unstructured, error) {
	objs, err := render(fsys, dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, o := range objs {
		id := describe(o)
		if seen[id] {
			return nil, fmt.Errorf("%s is listed twice under %s: kustomize refuses duplicates; remove one", id, dir)
		}
		seen[id] = true
	}
	return objs, nil
}

func render(fsys fs.FS, dir string) ([]*unstructured.Unstructured, error) {
	file := path.Join(dir, kustomizationFile)
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w (a kustomization directory needs a %s; a file it lists must be embedded by package config)", file, err, kustomizationFile)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w (shepherd install supports only apiVersion, kind, resources and images)", file, err)
	}
	if k.Kind != "Kustomization" || !strings.HasPrefix(k.APIVersion, "kustomize.config.k8s.io/") {
		return nil, fmt.Errorf("%s: apiVersion %q kind %q: want kustomize.config.k8s.io/v1beta1 Kustomization", file, k.APIVersion, k.Kind)
	}
	var out []*unstructured.Unstructured
	for _, r := range k.Resources {
		p := path.Join(dir, r)
		if !fs.ValidPath(p) {
			return nil, fmt.Errorf("%s: resource %q is outside config/", file, r)
		}
		info, err := fs.Stat(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %q: %w (is it embedded by package config?)", file, r, err)
		}
		var objs []*unstructured.Unstructured
		if info.IsDir() {
			objs, err = render(fsys, p)
		} else {
			objs, err = decodeFile(fsys, p)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	for _, img := range k.Images {
		if img.Name == "" {
			return nil, fmt.Errorf("%s: an images entry has no name", file)
		}
		for _, o := range out {
			setImages(o.Object, func(image string) string { return img.apply(image) })
		}
	}
	return out, nil
}

// decodeFile reads the objects of a YAML stream; each must have an
// apiVersion, a kind and a name.
func decodeFile(fsys fs.FS, p string) ([]*unstructured.Unstructured, error) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if len(o.Object) == 0 {
			continue
		}
		if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
			return nil, fmt.Errorf("%s: an object without apiVersion, kind or metadata.name", p)
		}
		objs = append(objs, o)
	}
}

// setImages replaces, through set, every image of a container (containers
// and initContainers lists, wherever they are, as kustomize's images do).
func setImages(v any, set func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if list, ok := child.([]any); ok && (k == "containers" || k == "initContainers") {
				for _, c := range list {
					if c, ok := c.(map[string]any); ok {
						if image, ok := c["image"].(string); ok {
							c["image"] = set(image)
						}
					}
				}
			}
			setImages(child, set)
		}
	case []any:
		for _, child := range v {
			setImages(child, set)
		}
	}
}

// apply is image after this entry, as kustomize computes it: unchanged
// unless its name is i.Name; a new tag or digest replaces both.
func (i Image) apply(image string) string {
	if !regexp.MustCompile("^" + regexp.QuoteMeta(i.Name) + `(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`).MatchString(image) {
		return image
	}
	name, tag, digest := splitImage(image)
	if i.NewName != "" {
		name = i.NewName
	}
	switch {
	case i.NewTag != "" && i.Digest != "":
		tag, digest = i.NewTag, i.Digest
	case i.NewTag != "":
		tag, digest = i.NewTag, ""
	case i.Digest != "":
		tag, digest = "", i.Digest
	}
	if tag != "" {
		name += ":" + tag
	}
	if digest != "" {
		name += "@" + digest
	}
	return name
}

// splitImage splits [host[:port]/]path[:tag][@digest].
func splitImage(image string) (name, tag, digest string) {
	rest := image
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest, digest = rest[:i], rest[i+1:]
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.Contains(rest[i:], "/") {
		rest, tag = rest[:i], rest[i+1:]
	}
	return rest, tag, digest
}

// describe names an object for messages: Kind namespace/name.
func describe(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
}
