package v1alpha1

import (
	"maps"
	"testing"
)

// TestPodSecurityRoundTrip: the Pod Security labels of a namespace survive
// the Work annotation that carries them, in a fixed order, and nothing
// else rides along.
func TestPodSecurityRoundTrip(t *testing.T) {
	labels := map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.36",
		"pod-security.kubernetes.io/warn": "baseline", "team": "a",
	}
	ps := PodSecurityLabels(labels)
	s := FormatPodSecurity(ps)
	if s != "pod-security.kubernetes.io/enforce=restricted,pod-security.kubernetes.io/enforce-version=v1.36,pod-security.kubernetes.io/warn=baseline" {
		t.Fatalf("formatted %q", s)
	}
	if got := ParsePodSecurity(s); !maps.Equal(got, ps) {
		t.Fatalf("parsed %v, want %v", got, ps)
	}
	if got := ParsePodSecurity("team=a,nonsense,pod-security.kubernetes.io/audit=restricted"); len(got) != 1 || got["pod-security.kubernetes.io/audit"] != "restricted" {
		t.Fatalf("parsed %v", got)
	}
	if FormatPodSecurity(nil) != "" || len(ParsePodSecurity("")) != 0 {
		t.Fatal("no labels, no annotation")
	}
}
