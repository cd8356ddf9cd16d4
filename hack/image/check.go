package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// mib is a mebibyte.
const mib = 1 << 20

// check returns what is wrong with c's image: an entrypoint other than
// the binary (with its fixed arguments), a user other than User, more
// than one layer, a file besides the binary, /etc/passwd and /etc/group
// (a shell, say), a binary that is not static, or more compressed bytes
// than c's budget. size is what it weighs.
func check(img v1.Image, c component) (size int64, problems []string) {
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	mt, err := img.MediaType()
	if err != nil {
		return 0, []string{err.Error()}
	}
	if mt != types.OCIManifestSchema1 {
		bad("manifest media type %s, want %s", mt, types.OCIManifestSchema1)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return 0, []string{err.Error()}
	}
	if want := append([]string{"/" + c.Name}, c.Command[1:]...); !slices.Equal(cfg.Config.Entrypoint, want) {
		bad("entrypoint %q, want %q", cfg.Config.Entrypoint, want)
	}
	if len(cfg.Config.Cmd) > 0 {
		bad("cmd %q, want none (the Deployment's args are the flags)", cfg.Config.Cmd)
	}
	if cfg.Config.User != User {
		bad("user %q, want %q (not root)", cfg.Config.User, User)
	}
	for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.version", "org.opencontainers.image.source"} {
		if cfg.Config.Labels[l] == "" {
			bad("label %s missing", l)
		}
	}
	layers, err := img.Layers()
	if err != nil {
		return 0, []string{err.Error()}
	}
	if len(layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 {
		bad("%d layers (%d diff IDs), want 1: the binary and nothing under it", len(layers), len(cfg.RootFS.DiffIDs))
	}
	cfgSize, err := img.Size() // the manifest
	if err != nil {
		return 0, []string{err.Error()}
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return 0, []string{err.Error()}
	}
	size = cfgSize + int64(len(raw))
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, []string{err.Error()}
		}
		size += n
		files, err := layerContents(l)
		if err != nil {
			return size, append(problems, err.Error())
		}
		problems = append(problems, checkFiles(files, c)...)
	}
	if budget := int64(c.BudgetMiB) * mib; size > budget {
		bad("%.1f MiB compressed, over its budget of %d MiB (docs/install.md)", float64(size)/mib, c.BudgetMiB)
	}
	return size, problems
}

// layerContents reads a layer's files: name -> content (nil for a
// directory).
func layerContents(l v1.Layer) (map[string][]byte, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(h.Name, "./")
		switch h.Typeflag {
		case tar.TypeDir:
			files[strings.TrimSuffix(name, "/")+"/"] = nil
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files[name] = data
		default:
			files[name] = []byte("type " + string(h.Typeflag)) // links and devices are refused below
		}
		if h.Uid != 0 || h.Gid != 0 {
			return nil, fmt.Errorf("%s is owned by %d:%d, want root (the user cannot change the image's files)", name, h.Uid, h.Gid)
		}
	}
}

// checkFiles wants the layer's files to be exactly layerFiles and a static
// binary /<c.Name>.
func checkFiles(files map[string][]byte, c component) (problems []string) {
	want := map[string]bool{c.Name: true}
	for _, f := range layerFiles() {
		want[f.Name] = true
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !want[n] {
			problems = append(problems, fmt.Sprintf("unexpected file /%s (an image holds the binary, /etc/passwd and /etc/group only: no shell)", n))
		}
	}
	bin, ok := files[c.Name]
	if !ok {
		return append(problems, fmt.Sprintf("no binary /%s", c.Name))
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return append(problems, fmt.Sprintf("/%s is not an ELF binary: %v", c.Name, err))
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			problems = append(problems, fmt.Sprintf("/%s is dynamically linked: build it with CGO_ENABLED=0", c.Name))
			break
		}
	}
	if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
		problems = append(problems, fmt.Sprintf("/%s has a symbol table or debug information: link it with -s -w", c.Name))
	}
	return problems
}
