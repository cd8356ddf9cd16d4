// Package verify holds repository checks that run with the tests.
package verify

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// controllerGen is the pinned generator; keep it in step with the Makefile.
const controllerGen = "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0"

// TestGeneratedFilesAreFresh regenerates the deepcopy functions, the CRD
// manifests and the controller manager's RBAC into a scratch copy of the API
// and of pkg/'s rbac.go files, and fails when the committed files differ, so
// a change to a kubebuilder marker cannot land without `make generate`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating with controller-gen takes a while; skipped in -short mode")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "hack/boilerplate.go.txt"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(scratch, f))
	}
	copyTree(t, filepath.Join(root, "api"), filepath.Join(scratch, "api"), func(p string) bool {
		return strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "zz_generated.deepcopy.go")
	})
	// RBAC markers live in each package's rbac.go only (checked below), so
	// those files alone regenerate the role, without compiling pkg/.
	copyTree(t, filepath.Join(root, "pkg"), filepath.Join(scratch, "pkg"), func(p string) bool {
		return filepath.Base(p) == "rbac.go"
	})

	run(t, scratch, "go", "run", controllerGen, "object:headerFile=hack/boilerplate.go.txt", "paths=./api/...")
	run(t, scratch, "go", "run", controllerGen, "crd", "paths=./api/...", "output:crd:artifacts:config=config/crd/bases")
	run(t, scratch, "go", "run", controllerGen, "rbac:roleName=shepherd-controller-manager", "paths=./pkg/...", "output:rbac:artifacts:config=config/rbac")

	compareTrees(t, filepath.Join(scratch, "config/crd/bases"), filepath.Join(root, "config/crd/bases"), ".yaml")
	compareTrees(t, filepath.Join(scratch, "config/rbac"), filepath.Join(root, "config/rbac"), "role.yaml")
	compareTrees(t, filepath.Join(scratch, "api"), filepath.Join(root, "api"), "zz_generated.deepcopy.go")
}

// TestChartCopiesAreFresh keeps the Helm chart's copies of generated files
// equal to them: its crds/ to config/crd/bases and config/crd/mcs (the MCS
// API's ServiceExport), and files/role.yaml to config/rbac/role.yaml
// (`make generate` writes every copy).
func TestChartCopiesAreFresh(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(root, "charts/shepherd")
	crds := t.TempDir()
	for _, dir := range []string{"config/crd/bases", "config/crd/mcs"} {
		for name, data := range collect(t, filepath.Join(root, dir), ".yaml") {
			if err := os.WriteFile(filepath.Join(crds, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	compareTrees(t, crds, filepath.Join(chart, "crds"), ".yaml")
	compareTrees(t, filepath.Join(root, "config/rbac"), filepath.Join(chart, "files"), "role.yaml")
}

// TestRBACMarkersLiveInRBACFiles keeps every kubebuilder RBAC marker of
// pkg/ in a file named rbac.go, which TestGeneratedFilesAreFresh regenerates
// the role from.
func TestRBACMarkersLiveInRBACFiles(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "pkg"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || filepath.Base(p) == "rbac.go" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("+kubebuilder:"+"rbac")) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s holds a kubebuilder RBAC marker: move it to %s, where `make generate` and this check read them", rel, filepath.Join(filepath.Dir(rel), "rbac.go"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// compareTrees checks that both trees hold the same files ending in suffix,
// with the same contents.
func compareTrees(t *testing.T, fresh, committed, suffix string) {
	t.Helper()
	want := collect(t, fresh, suffix)
	got := collect(t, committed, suffix)
	for name, content := range want {
		c, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s is missing from the repository: run `make generate` and commit it", name)
		case !bytes.Equal(c, content):
			t.Errorf("%s is stale: run `make generate` and commit the result", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is no longer generated: delete it (run `make generate`)", name)
		}
	}
}

func collect(t *testing.T, dir, suffix string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, suffix) {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTree(t *testing.T, src, dst string, keep func(string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !keep(p) {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
