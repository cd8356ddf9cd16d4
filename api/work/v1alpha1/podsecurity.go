package v1alpha1

import (
	"slices"
	"strings"
)

// PodSecurityLabelPrefix is the prefix of a namespace's Pod Security
// labels (enforce, audit and warn, with their versions).
const PodSecurityLabelPrefix = "pod-security.kubernetes.io/"

// PodSecurityLabels are the Pod Security labels among labels.
func PodSecurityLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, PodSecurityLabelPrefix) {
			out[k] = v
		}
	}
	return out
}

// FormatPodSecurity writes Pod Security labels as AnnotationPodSecurity
// holds them: "key=value" pairs joined by ",", sorted by key (label keys
// and values hold neither "," nor "=").
func FormatPodSecurity(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// ParsePodSecurity reads AnnotationPodSecurity; entries that are not Pod
// Security labels are dropped.
func ParsePodSecurity(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.HasPrefix(k, PodSecurityLabelPrefix) {
			out[k] = v
		}
	}
	return out
}
