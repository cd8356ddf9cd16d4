package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// built runs `make image`'s command once for the test binary's
// architecture into a scratch directory and returns it.
func built(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds every image's binary; skipped in -short mode")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "shepherd-images-")
		if buildErr == nil {
			buildErr = run(context.Background(), []string{"-out", buildDir, "-registry", "registry.example.com/team", "-tag", "v9.8.7", "-version", "v9.8.7", "-created", "2026-01-02T03:04:05Z"})
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// TestImagesAsBuilt reads every image back from the OCI layout and the
// docker archives `make image` wrote: valid (every digest and size
// verified), named, the same in both, and passing the checks.
func TestImagesAsBuilt(t *testing.T) {
	dir := built(t)
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the OCI layout is not valid: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != len(components) {
		t.Fatalf("the layout holds %d images, want %d", len(m.Manifests), len(components))
	}
	for i, c := range components {
		t.Run(c.Name, func(t *testing.T) {
			desc := m.Manifests[i]
			ref := "registry.example.com/team/" + c.Name + ":v9.8.7"
			if got := desc.Annotations["org.opencontainers.image.ref.name"]; got != ref {
				t.Errorf("ref.name %q, want %q", got, ref)
			}
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			size, problems := check(img, c)
			for _, p := range problems {
				t.Error(p)
			}
			t.Logf("%s: %.1f MiB compressed (budget %d MiB)", c.Name, float64(size)/mib, c.BudgetMiB)
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
				t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
			}
			if v := cfg.Config.Labels["org.opencontainers.image.version"]; v != "v9.8.7" {
				t.Errorf("version label %q", v)
			}
			if got := cfg.Created.UTC().Format("2006-01-02T15:04:05Z"); got != "2026-01-02T03:04:05Z" {
				t.Errorf("created %s, want the -created time", got)
			}
			files, err := imageFiles(img)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(files["etc/passwd"]), ":65532:65532:") {
				t.Errorf("/etc/passwd lacks the user 65532:\n%s", files["etc/passwd"])
			}
			if !strings.Contains(string(files[c.Name]), "v9.8.7") {
				t.Errorf("/%s does not carry the -version", c.Name)
			}

			archived, err := tarball.ImageFromPath(filepath.Join(dir, c.Name+".tar"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Image(archived); err != nil {
				t.Errorf("the docker archive is not valid: %v", err)
			}
			want, _ := img.ConfigName()
			if got, _ := archived.ConfigName(); got != want {
				t.Errorf("the docker archive's config %s, the layout's %s", got, want)
			}
		})
	}
}

// layoutImage is the i-th image of the OCI layout under dir (a docker
// archive has no manifest media type of its own: the layout's are the
// images as pushed).
func layoutImage(dir string, i int) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	return idx.Image(m.Manifests[i].Digest)
}

func imageFiles(img v1.Image) (map[string][]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	return layerContents(layers[0])
}

// TestCheckRefusesBadImages feeds check images that break each rule, made
// from a good one.
func TestCheckRefusesBadImages(t *testing.T) {
	dir := built(t)
	c := components[0]
	good, err := layoutImage(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := check(good, c); len(problems) > 0 {
		t.Fatalf("the good image fails: %v", problems)
	}
	withConfig := func(edit func(*v1.Config)) v1.Image {
		cfg, err := good.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.DeepCopy()
		edit(&cfg.Config)
		img, err := mutate.ConfigFile(good, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	shell, err := layer(writeFile(t, "#!/bin/sh\n"), "bin/sh", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	twoLayers, err := mutate.AppendLayers(good, shell)
	if err != nil {
		t.Fatal(err)
	}
	oneLayer, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), shell)
	if err != nil {
		t.Fatal(err)
	}
	tight := c
	tight.BudgetMiB = 1
	for _, tc := range []struct {
		name string
		img  v1.Image
		c    component
		want string
	}{
		{"root", withConfig(func(c *v1.Config) { c.User = "" }), c, `user "", want "65532:65532"`},
		{"root by name", withConfig(func(c *v1.Config) { c.User = "root" }), c, "not root"},
		{"another entrypoint", withConfig(func(c *v1.Config) { c.Entrypoint = []string{"/bin/sh", "-c"} }), c, "entrypoint"},
		{"a cmd", withConfig(func(c *v1.Config) { c.Cmd = []string{"--help"} }), c, "want none"},
		{"no labels", withConfig(func(c *v1.Config) { c.Labels = nil }), c, "label org.opencontainers.image.title missing"},
		{"a shell in another layer", twoLayers, c, "2 layers"},
		{"a shell in the layer", oneLayer, c, "unexpected file /bin/sh"},
		{"over budget", good, tight, "over its budget of 1 MiB"},
		{"docker media types", mutate.MediaType(good, types.DockerManifestSchema2), c, "manifest media type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := check(tc.img, tc.c)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBudgetsAreTheDocs: docs/install.md states each image's budget, the
// number the images are held to.
func TestBudgetsAreTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range components {
		re := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(c.Name) + "` \\|[^\\n]*\\| (\\d+) MiB \\|$")
		m := re.FindSubmatch(doc)
		if m == nil {
			t.Errorf("docs/install.md has no row | `%s` | ... | N MiB | stating its budget", c.Name)
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != c.BudgetMiB {
			t.Errorf("docs/install.md gives %s a budget of %d MiB, the build %d MiB: change both", c.Name, n, c.BudgetMiB)
		}
	}
}

// TestFlagsRefuseBadInput: each bad flag is named with the fix.
func TestFlagsRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-platforms", "windows/amd64"}, "want linux/ARCH[/VARIANT]"},
		{[]string{"-platforms", "linux"}, "want linux/ARCH[/VARIANT]"},
		{[]string{"-created", "yesterday"}, "want RFC 3339"},
		{[]string{"-tag", "a b"}, "do not make an image reference"},
		{[]string{"nope"}, `no image "nope": choose among shepherd-controller-manager`},
	} {
		_, err := parse(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	o, err := parse([]string{"-platforms", "linux/amd64,linux/arm64/v8", "shepherd-agent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Platforms) != 2 || o.Platforms[1].Variant != "v8" || len(o.Components) != 1 || o.Components[0].Name != "shepherd-agent" {
		t.Errorf("parsed %+v", o)
	}
}
