package overrides

import (
	"fmt"
	"regexp"
	"strings"
)

// image is a container image reference split into the components an
// imageOverrider changes: [registry/]repository[:tag][@digest].
//
// Parsing only splits the string (after checking it against the grammar of
// github.com/distribution/reference), so formatting a parsed image gives
// back the same string; nothing is normalised (no docker.io, no library/,
// no latest), since the member's runtime does that and an override must
// not change what it was not asked to.
type image struct {
	// Registry is the host, with its port if any; empty when the
	// reference names none.
	Registry   string
	Repository string
	Tag        string
	// Digest is "<algorithm>:<hex>", e.g. sha256:...
	Digest string
}

// The grammar of image references, as github.com/distribution/reference
// defines it.
var (
	domainRE = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
	pathRE   = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	tagRE    = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	// Digests of the algorithms container registries use, as
	// github.com/opencontainers/go-digest accepts them: lower-case hex of
	// the algorithm's length.
	digestRE     = regexp.MustCompile(`^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$`)
	maxNameBytes = 255
)

// parseImage splits ref into its components, or says why it is not an
// image reference.
func parseImage(ref string) (image, error) {
	var img image
	name := ref
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name, img.Digest = name[:i], name[i+1:]
		if !digestRE.MatchString(img.Digest) {
			return image{}, fmt.Errorf("image %q: digest %q is not sha256, sha384 or sha512:<lower-case hex>", ref, img.Digest)
		}
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, img.Tag = name[:i], name[i+1:]
		if !tagRE.MatchString(img.Tag) {
			return image{}, fmt.Errorf("image %q: tag %q is not valid", ref, img.Tag)
		}
	}
	if len(name) > maxNameBytes {
		return image{}, fmt.Errorf("image %q: name longer than %d bytes", ref, maxNameBytes)
	}
	img.Repository = name
	if i := strings.IndexByte(name, '/'); i >= 0 && isRegistry(name[:i]) {
		img.Registry, img.Repository = name[:i], name[i+1:]
		if !domainRE.MatchString(img.Registry) {
			return image{}, fmt.Errorf("image %q: registry %q is not a host[:port]", ref, img.Registry)
		}
	}
	if !pathRE.MatchString(img.Repository) {
		return image{}, fmt.Errorf("image %q: repository %q is not valid (lower-case path components)", ref, img.Repository)
	}
	return img, nil
}

// isRegistry says whether the first component of a name is a registry
// rather than part of the repository, as container runtimes decide it:
// it has a dot or a port, is localhost, or has upper-case letters (which
// a repository may not).
func isRegistry(s string) bool {
	return strings.ContainsAny(s, ".:[") || s == "localhost" || strings.ToLower(s) != s
}

// String formats img as a reference.
func (img image) String() string {
	var b strings.Builder
	if img.Registry != "" {
		b.WriteString(img.Registry)
		b.WriteByte('/')
	}
	b.WriteString(img.Repository)
	if img.Tag != "" {
		b.WriteByte(':')
		b.WriteString(img.Tag)
	}
	if img.Digest != "" {
		b.WriteByte('@')
		b.WriteString(img.Digest)
	}
	return b.String()
}
