package overrides

import (
	_ "crypto/sha256" // the digest algorithms distribution/reference accepts
	_ "crypto/sha512"
	"strings"
	"testing"

	"github.com/distribution/reference"
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		ref  string
		want image
		err  string
	}{
		{ref: "nginx", want: image{Repository: "nginx"}},
		{ref: "nginx:1.25", want: image{Repository: "nginx", Tag: "1.25"}},
		{ref: "library/nginx:latest", want: image{Repository: "library/nginx", Tag: "latest"}},
		{ref: "docker.io/library/nginx", want: image{Registry: "docker.io", Repository: "library/nginx"}},
		{ref: "registry.k8s.io/kube-apiserver:v1.30.0", want: image{Registry: "registry.k8s.io", Repository: "kube-apiserver", Tag: "v1.30.0"}},
		{ref: "fictional.registry.example:10443/team/app:v1", want: image{Registry: "fictional.registry.example:10443", Repository: "team/app", Tag: "v1"}},
		{ref: "localhost/app", want: image{Registry: "localhost", Repository: "app"}},
		{ref: "localhost:5000/app", want: image{Registry: "localhost:5000", Repository: "app"}},
		{ref: "Registry/app", want: image{Registry: "Registry", Repository: "app"}},
		{ref: "[::1]:5000/app:v1", want: image{Registry: "[::1]:5000", Repository: "app", Tag: "v1"}},
		{ref: "localhost:5000", want: image{Repository: "localhost", Tag: "5000"}},
		{ref: "app@" + digest, want: image{Repository: "app", Digest: digest}},
		{ref: "r.example/app:v1@" + digest, want: image{Registry: "r.example", Repository: "app", Tag: "v1", Digest: digest}},
		{ref: "a/b/c__d-e.f_g:T_1.x-y", want: image{Repository: "a/b/c__d-e.f_g", Tag: "T_1.x-y"}},
		{ref: "", err: "repository"},
		{ref: "Nginx", err: "repository"},
		{ref: "nginx:", err: "tag"},
		{ref: "nginx:-x", err: "tag"},
		{ref: "nginx@sha256:abc", err: "digest"},
		{ref: "nginx@md5:0123456789abcdef0123456789abcdef", err: "digest"},
		{ref: "nginx@" + strings.ToUpper(digest), err: "digest"},
		{ref: "nginx@", err: "digest"},
		{ref: "r.example/", err: "repository"},
		{ref: "-r.example/app", err: "registry"},
		{ref: "r.example:port/app", err: "registry"},
		{ref: "app//x", err: "repository"},
		{ref: "app a", err: "repository"},
		{ref: strings.Repeat("a", 256), err: "longer than 255"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := parseImage(tt.ref)
			wantErr(t, err, tt.err)
			if tt.err != "" {
				return
			}
			if got != tt.want {
				t.Fatalf("parseImage = %+v, want %+v", got, tt.want)
			}
			if s := got.String(); s != tt.ref {
				t.Fatalf("String() = %q, want %q", s, tt.ref)
			}
		})
	}
}

// FuzzParseImage: whatever parses formats back to the same string, and
// that string parses to the same components.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		"nginx", "nginx:1.25", "registry.k8s.io/pause:3.9", "localhost:5000/a/b:c",
		"[::1]:5000/app", "app@" + digest, "r.example/app:v1@" + digest, "a:b:c", "a/b@c:d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		img, err := parseImage(ref)
		if err != nil {
			return
		}
		s := img.String()
		if s != ref {
			t.Fatalf("parseImage(%q) = %+v formats as %q", ref, img, s)
		}
		back, err := parseImage(s)
		if err != nil || back != img {
			t.Fatalf("%q parses back as %+v, %v; want %+v", s, back, err, img)
		}
	})
}

// FuzzParseImageAgreesWithDistribution: parseImage accepts exactly what
// github.com/distribution/reference (the grammar container tools use, and
// Karmada's parser) accepts, with the same name, tag and digest.
func FuzzParseImageAgreesWithDistribution(f *testing.F) {
	for _, s := range []string{
		"nginx", "Registry/app", "localhost:5000", "[::1]:5000/app", "app@" + digest,
		"r.example/app:v1@" + digest, "a-b/c", "A_b/c", "a@sha256:abc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		img, err := parseImage(ref)
		theirs, theirErr := reference.Parse(ref)
		if (err == nil) != (theirErr == nil) {
			t.Fatalf("%q: parseImage error %v, distribution's %v", ref, err, theirErr)
		}
		if err != nil {
			return
		}
		var name, tag, dgst string
		if n, ok := theirs.(reference.Named); ok {
			name = n.Name()
		}
		if tg, ok := theirs.(reference.Tagged); ok {
			tag = tg.Tag()
		}
		if d, ok := theirs.(reference.Digested); ok {
			dgst = d.Digest().String()
		}
		mine := img.Repository
		if img.Registry != "" {
			mine = img.Registry + "/" + mine
		}
		if mine != name || img.Tag != tag || img.Digest != dgst {
			t.Fatalf("%q: parseImage %+v, distribution name %q tag %q digest %q", ref, img, name, tag, dgst)
		}
	})
}
