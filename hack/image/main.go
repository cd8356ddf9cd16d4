// Command image builds Shepherd's container images without a container
// runtime: `make image` runs it. Each image is one layer holding a static
// binary of this module (CGO_ENABLED=0, -trimpath, -s -w), /etc/passwd
// and /etc/group; it runs as user 65532 with the binary as entrypoint,
// and has no base image, shell or package manager. Nothing is pulled.
//
// It writes, under -out:
//
//	oci/             an OCI image layout with every image (skopeo, crane, oras, containerd)
//	<name>.tar       each image as a docker archive (docker load, podman load, kind load image-archive)
//
// and checks each image as its test does (entrypoint, user, one layer,
// no other file, a static binary, the size budget of docs/install.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	buildOptions
	Out        string
	Registry   string
	Tag        string
	Platforms  []v1.Platform
	Components []component
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.Out, "out", "bin/images", "directory for the OCI layout (oci/) and the docker archives (<name>.tar)")
	fs.StringVar(&o.Registry, "registry", "ghcr.io/shepherd-io", "registry and path the images are named under")
	fs.StringVar(&o.Tag, "tag", "latest", "the images' tag")
	fs.StringVar(&o.Version, "version", "v0.1.0-dev", "version written into the binaries and the images' labels")
	fs.StringVar(&o.Revision, "revision", "", "the source's commit, for the images' labels")
	created := fs.String("created", "", "the images' creation time and files' mtime, RFC 3339 or Unix seconds (default $SOURCE_DATE_EPOCH, else 1970-01-01: reproducible)")
	platforms := fs.String("platforms", "linux/"+runtime.GOARCH, "comma-separated linux/ARCH[/VARIANT]; more than one writes an image index per image and no docker archives")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./hack/image [flags] [image...]\nimages: %s (default: all)\n", strings.Join(names(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.Created, err = parseCreated(*created); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*platforms, ",") {
		p, err := parsePlatform(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("-platforms: %w", err)
		}
		o.Platforms = append(o.Platforms, p)
	}
	if _, err := name.NewTag(o.Registry + "/shepherd:" + o.Tag); err != nil {
		return o, fmt.Errorf("-registry %q -tag %q do not make an image reference: %w", o.Registry, o.Tag, err)
	}
	o.Components = components
	if fs.NArg() > 0 {
		o.Components = nil
		for _, n := range fs.Args() {
			i := slices.IndexFunc(components, func(c component) bool { return c.Name == n })
			if i < 0 {
				return o, fmt.Errorf("no image %q: choose among %s", n, strings.Join(names(), ", "))
			}
			o.Components = append(o.Components, components[i])
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.Root, err = moduleRoot(); err != nil {
		return err
	}
	if o.Scratch, err = os.MkdirTemp("", "shepherd-image-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.Scratch)
	built, err := buildAll(ctx, o)
	if err != nil {
		return err
	}
	if err := write(o, built); err != nil {
		return err
	}
	return report(os.Stdout, o, built)
}

// builtImage is one component's image for one platform.
type builtImage struct {
	Component component
	Platform  v1.Platform
	Image     v1.Image
}

// buildAll builds every component for every platform, as many at a
// time as there are CPUs (linking and compressing each use one); the
// result is in the order of the components, then of the platforms.
func buildAll(ctx context.Context, o options) ([]builtImage, error) {
	type job struct {
		c   component
		p   v1.Platform
		key string
	}
	var jobs []job
	// Images of the same package share its binary: it is built once.
	var keys []string
	for _, c := range o.Components {
		for _, p := range o.Platforms {
			key := c.Command[0] + " " + platformString(p)
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
			jobs = append(jobs, job{c: c, p: p, key: key})
		}
	}
	binaries := make([]string, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for i, key := range keys {
		j := jobs[slices.IndexFunc(jobs, func(j job) bool { return j.key == key })]
		g.Go(func() error {
			bin, err := buildBinary(gctx, o.buildOptions, j.c, j.p)
			binaries[i] = bin
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]builtImage, len(jobs))
	g, _ = errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for i, j := range jobs {
		g.Go(func() error {
			img, err := image(o.buildOptions, j.c, j.p, binaries[slices.Index(keys, j.key)])
			if err != nil {
				return fmt.Errorf("%s for %s: %w", j.c.Name, platformString(j.p), err)
			}
			out[i] = builtImage{Component: j.c, Platform: j.p, Image: img}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// reference is c's image name under o's registry and tag.
func reference(o options, c component) string { return o.Registry + "/" + c.Name + ":" + o.Tag }

// write puts the images into an OCI layout under o.Out/oci (replacing
// it), and, for one platform, each into o.Out/<name>.tar.
func write(o options, built []builtImage) error {
	dir := filepath.Join(o.Out, "oci")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, c := range o.Components {
		ref := reference(o, c)
		annotations := layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref,
			"io.containerd.image.name":          ref,
		})
		var mine []builtImage
		for _, b := range built {
			if b.Component.Name == c.Name {
				mine = append(mine, b)
			}
		}
		if len(o.Platforms) == 1 {
			if err := lp.AppendImage(mine[0].Image, annotations); err != nil {
				return err
			}
			tag, err := name.NewTag(ref)
			if err != nil {
				return err
			}
			if err := tarball.WriteToFile(filepath.Join(o.Out, c.Name+".tar"), tag, mine[0].Image); err != nil {
				return err
			}
			continue
		}
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		for _, b := range mine {
			p := b.Platform
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: b.Image, Descriptor: v1.Descriptor{Platform: &p}})
		}
		if err := lp.AppendIndex(idx, annotations); err != nil {
			return err
		}
	}
	return nil
}

// report checks every image and prints its size; any problem fails.
func report(w *os.File, o options, built []builtImage) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tPLATFORM\tCOMPRESSED\tBUDGET\tDIGEST")
	var problems []string
	for _, b := range built {
		size, p := check(b.Image, b.Component)
		for _, s := range p {
			problems = append(problems, fmt.Sprintf("%s (%s): %s", b.Component.Name, platformString(b.Platform), s))
		}
		d, err := b.Image.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f MiB\t%d MiB\t%s\n", reference(o, b.Component), platformString(b.Platform), float64(size)/mib, b.Component.BudgetMiB, d)
	}
	tw.Flush()
	fmt.Fprintf(w, "written to %s (OCI layout oci/", o.Out)
	if len(o.Platforms) == 1 {
		fmt.Fprint(w, " and docker archives <name>.tar")
	}
	fmt.Fprintln(w, ")")
	if len(problems) > 0 {
		return fmt.Errorf("the images do not pass their checks:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func names() []string {
	var out []string
	for _, c := range components {
		out = append(out, c.Name)
	}
	return out
}

// parseCreated reads -created, else $SOURCE_DATE_EPOCH, else the Unix
// epoch.
func parseCreated(s string) (time.Time, error) {
	if s == "" {
		s = os.Getenv("SOURCE_DATE_EPOCH")
	}
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(secs, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, fmt.Errorf("-created %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", s)
	}
	return t.UTC(), nil
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run it inside the module (make image)")
	}
	return filepath.Dir(gomod), nil
}
