package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// versionVar is the linker variable the version is written to.
const versionVar = "github.com/shepherd-io/shepherd/pkg/version.Version"

// buildOptions say how images are built.
type buildOptions struct {
	// Root is the module's directory.
	Root string
	// Version is written into the binary and the image's labels.
	Version string
	// Revision is the source's commit (a label), if known.
	Revision string
	// Created is the images' creation time and every file's mtime: the
	// commit's time makes the build reproducible.
	Created time.Time
	// Scratch holds the binaries while they are built.
	Scratch string
}

// buildBinary compiles c's package for platform p statically: no cgo (no
// C library in the image), no paths of the build machine, no symbol
// table or debug information.
func buildBinary(ctx context.Context, o buildOptions, c component, p v1.Platform) (string, error) {
	out := filepath.Join(o.Scratch, strings.ReplaceAll(platformString(p), "/", "-"), strings.ReplaceAll(strings.Trim(c.Command[0], "./"), "/", "-"))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w -X "+versionVar+"="+o.Version,
		"-o", out, c.Command[0])
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Variant != "" && p.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s for %s: %v\n%s", c.Command[0], p.OS+"/"+p.Architecture, err, msg)
	}
	return out, nil
}

// passwd and group name the one user the images run as (and root, which
// owns the files), with no login shell: there is none in the image.
const (
	passwd = "root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// layerFiles are the image's files besides the binary.
func layerFiles() []tarFile {
	return []tarFile{
		{Name: "etc/", Mode: 0o755, Dir: true},
		{Name: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Name: "etc/group", Mode: 0o644, Data: []byte(group)},
	}
}

type tarFile struct {
	Name string
	Mode int64
	Dir  bool
	Data []byte
}

// layer is the image's only layer: the files of layerFiles and the binary
// at /<name>, owned by root, every mtime the build's.
func layer(binary, name string, mtime time.Time) (v1.Layer, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	files := append(layerFiles(), tarFile{Name: name, Mode: 0o755, Data: bin})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if f.Dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	// Best compression: the layer is built once and pulled by every node.
	// It is compressed here, once: a layer made from the uncompressed tar
	// compresses it again each time it is read (for its digest, the OCI
	// layout and the docker archive), which at this level is most of the
	// build's time.
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// image assembles c's image for platform p from its binary: one layer, an
// OCI manifest, and a config with the entrypoint, the user and the labels.
func image(o buildOptions, c component, p v1.Platform, binary string) (v1.Image, error) {
	l, err := layer(binary, c.Name, o.Created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "hack/image: " + strings.Join(c.Command, " "), Comment: "static binary, /etc/passwd and /etc/group"}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Created = v1.Time{Time: o.Created}
	cfg.Author = "The Shepherd authors"
	cfg.Config = v1.Config{
		Entrypoint: append([]string{"/" + c.Name}, c.Command[1:]...),
		User:       User,
		WorkingDir: "/",
		Labels:     labels(o, c),
	}
	if len(c.Ports) > 0 {
		cfg.Config.ExposedPorts = map[string]struct{}{}
		for _, port := range c.Ports {
			cfg.Config.ExposedPorts[strconv.Itoa(port)+"/tcp"] = struct{}{}
		}
	}
	return mutate.ConfigFile(img, cfg)
}

// labels are the OCI annotations of the image's config.
func labels(o buildOptions, c component) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       c.Name,
		"org.opencontainers.image.description": c.Description,
		"org.opencontainers.image.source":      "https://github.com/shepherd-io/shepherd",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	return l
}

// parsePlatform reads os/arch[/variant].
func parsePlatform(s string) (v1.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "linux" || parts[1] == "" {
		return v1.Platform{}, fmt.Errorf("platform %q: want linux/ARCH[/VARIANT], e.g. linux/amd64 or linux/arm64", s)
	}
	p := v1.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// platformString is os/arch[/variant].
func platformString(p v1.Platform) string {
	return path.Join(p.OS, p.Architecture, p.Variant)
}
