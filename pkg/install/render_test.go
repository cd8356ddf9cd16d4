package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/shepherd-io/shepherd/config"
)

// configDir is config/ in the checkout.
const configDir = "../../config"

// byID indexes objects by kind, namespace and name.
func byID(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[describe(o)] = o
	}
	return out
}

// kustomizeBuild builds dir of fs with kustomize itself (as a library: no
// kustomize binary is needed).
func kustomizeBuild(t *testing.T, fs filesys.FileSystem, dir string) []*unstructured.Unstructured {
	t.Helper()
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// asJSON is what is sent to the API server: the decoders' number types
// (int from kustomize, int64 from Render) do not matter.
func asJSON(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// sameObjects fails unless want and got hold the same objects.
func sameObjects(t *testing.T, want, got []*unstructured.Unstructured) {
	t.Helper()
	w, g := byID(want), byID(got)
	for id, o := range w {
		switch other, ok := g[id]; {
		case !ok:
			t.Errorf("%s: kustomize builds it, Render does not", id)
		case !reflect.DeepEqual(asJSON(t, o), asJSON(t, other)):
			t.Errorf("%s differs:\nkustomize: %s\nRender:    %s", id, asJSON(t, o), asJSON(t, other))
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			t.Errorf("%s: Render builds it, kustomize does not", id)
		}
	}
}

// TestRenderIsWhatKustomizeBuilds: `shepherd install` applies what
// `kubectl apply -k config/default` does, and `shepherd register --deploy`
// what `kubectl apply -k config/agent` does, from the embedded copies.
func TestRenderIsWhatKustomizeBuilds(t *testing.T) {
	for _, dir := range []string{config.DefaultKustomization, config.AgentKustomization} {
		t.Run(dir, func(t *testing.T) {
			want := kustomizeBuild(t, filesys.MakeFsOnDisk(), filepath.Join(configDir, dir))
			embedded, err := Render(config.Manifests, dir)
			if err != nil {
				t.Fatal(err)
			}
			sameObjects(t, want, embedded)
			onDisk, err := Render(os.DirFS(configDir), dir)
			if err != nil {
				t.Fatal(err)
			}
			sameObjects(t, onDisk, embedded)
		})
	}
}

// TestImagesAsKustomizeSetsThem compares the images entries with
// kustomize's on a few references.
func TestImagesAsKustomizeSetsThem(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      initContainers:
      - {name: init, image: "example.com:5000/team/app:v1"}
      containers:
      - {name: a, image: "example.com:5000/team/app"}
      - {name: b, image: "example.com:5000/team/app@sha256:aaaa"}
      - {name: c, image: "example.com:5000/team/other:v1"}
      - {name: d, image: "app:v1"}
`
	for _, images := range []string{
		"- {name: example.com:5000/team/app, newTag: v2}",
		"- {name: example.com:5000/team/app, newName: mirror.example/app}",
		"- {name: example.com:5000/team/app, digest: 'sha256:bbbb'}",
		"- {name: example.com:5000/team/app, newName: m/app, newTag: v3, digest: 'sha256:cccc'}\n- {name: app, newTag: v9}",
	} {
		kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [d.yaml]\nimages:\n" + images + "\n"
		mem := filesys.MakeFsInMemory()
		for name, data := range map[string]string{"k/kustomization.yaml": kust, "k/d.yaml": deployment} {
			if err := mem.WriteFile(name, []byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Render(fstest.MapFS{
			"k/kustomization.yaml": {Data: []byte(kust)},
			"k/d.yaml":             {Data: []byte(deployment)},
		}, "k")
		if err != nil {
			t.Fatal(err)
		}
		sameObjects(t, kustomizeBuild(t, mem, "k"), got)
	}
}

// TestRenderRefuses what it cannot build as kustomize would.
func TestRenderRefuses(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	const head = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"another field", map[string]string{"k/kustomization.yaml": head + "namePrefix: x-\nresources: [c.yaml]\n", "k/c.yaml": cm},
			`unknown field "namePrefix"`},
		{"a missing file", map[string]string{"k/kustomization.yaml": head + "resources: [gone.yaml]\n"}, `resource "gone.yaml"`},
		{"outside the tree", map[string]string{"k/kustomization.yaml": head + "resources: [../../x.yaml]\n"}, "outside config/"},
		{"a directory without a kustomization", map[string]string{"k/kustomization.yaml": head + "resources: [sub]\n", "k/sub/c.yaml": cm},
			"reading k/sub/kustomization.yaml"},
		{"a duplicate", map[string]string{"k/kustomization.yaml": head + "resources: [c.yaml, d.yaml]\n", "k/c.yaml": cm, "k/d.yaml": cm},
			"ConfigMap c is listed twice"},
		{"not a kustomization", map[string]string{"k/kustomization.yaml": "apiVersion: v1\nkind: List\n"}, "want kustomize.config.k8s.io/v1beta1 Kustomization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := fstest.MapFS{}
			for n, d := range tc.files {
				fs[n] = &fstest.MapFile{Data: []byte(d)}
			}
			_, err := Render(fs, "k")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestCRDKustomizationListsEveryBase: a CRD that `make generate` adds to
// config/crd/bases must be listed in config/crd/kustomization.yaml.
func TestCRDKustomizationListsEveryBase(t *testing.T) {
	objs, err := Render(os.DirFS(configDir), "crd")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, o := range objs {
		listed = append(listed, o.GetName())
	}
	files, err := filepath.Glob(filepath.Join(configDir, "crd/bases/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mcs, err := filepath.Glob(filepath.Join(configDir, "crd/mcs/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, mcs...)
	for _, f := range files {
		objs, err := decodeFile(os.DirFS(filepath.Dir(f)), filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if !slices.Contains(listed, o.GetName()) {
				t.Errorf("config/crd/kustomization.yaml does not list %s: add it to resources", f)
			}
		}
	}
	if len(listed) != len(files) {
		t.Errorf("config/crd/kustomization.yaml lists %d CRDs, config/crd/bases and config/crd/mcs hold %d files", len(listed), len(files))
	}
}
