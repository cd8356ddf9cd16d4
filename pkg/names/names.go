// Package names derives the names and labels Shepherd gives the objects it
// creates on the hub: bindings for resource templates, Works for bindings,
// execution namespaces for clusters.
//
// Every name is a pure function of its inputs, so a controller finds the
// object it would create without listing, and a restart produces the same
// names. Names keep the Karmada shape a person recognizes
// (`<template>-<kind>`) and fall back to a truncated prefix plus a short hash
// of the full input only when the readable form is too long or not a valid
// object name; the hash keeps distinct inputs apart.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// hashLength is the number of hex digits of the disambiguating hash (40
// bits: collisions among the objects of one namespace are negligible).
const hashLength = 10

// BindingName is the name of the binding of a template of the given kind:
// `<name>-<lowercase kind>`, as in Karmada. Template names that are not
// valid object names (ClusterRoles such as "system:controller:foo" may hold
// colons and capitals) or that would make the name too long get a hash
// suffix instead of being silently merged with another template's binding.
//
// Two kinds with the same name in different API groups map to the same
// binding name; the detector notices (the binding names another resource)
// and reports a conflict rather than overwriting.
func BindingName(kind, name string) string {
	return subdomain(name + "-" + strings.ToLower(kind))
}

// WorkName is the name of a binding's Work in a cluster's execution
// namespace. Works of every namespace share that namespace, so the Work of
// a ResourceBinding is `<binding-namespace>.<binding-name>` (namespaces
// hold no dots, so the split is unambiguous) and that of a
// ClusterResourceBinding is `<binding-name>`.
func WorkName(bindingNamespace, bindingName string) string {
	if bindingNamespace == "" {
		return subdomain(bindingName)
	}
	return subdomain(bindingNamespace + "." + bindingName)
}

// ExecutionNamespace is the hub namespace holding the Works of a cluster.
func ExecutionNamespace(cluster string) string {
	return workv1alpha1.ExecutionNamespacePrefix + cluster
}

// ClusterOfExecutionNamespace returns the cluster whose execution namespace
// is ns; false when ns is not an execution namespace.
func ClusterOfExecutionNamespace(ns string) (string, bool) {
	cluster, ok := strings.CutPrefix(ns, workv1alpha1.ExecutionNamespacePrefix)
	return cluster, ok && cluster != ""
}

// IsExecutionNamespace reports whether ns holds a cluster's Works.
func IsExecutionNamespace(ns string) bool {
	_, ok := ClusterOfExecutionNamespace(ns)
	return ok
}

// LabelValue turns s into a valid label value: s itself when it is one,
// otherwise a truncated prefix and a hash of s. Object names may be 253
// characters long, label values only 63, so every name Shepherd writes into
// a label goes through here, on writing and on selecting alike.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	return withHash(sanitize(s), s, validation.LabelValueMaxLength)
}

// subdomain turns s into a valid DNS-1123 subdomain (an object name): s
// itself when it is one, otherwise a sanitized, truncated prefix and a hash
// of s.
func subdomain(s string) string {
	if len(validation.IsDNS1123Subdomain(s)) == 0 {
		return s
	}
	return withHash(sanitize(s), s, validation.DNS1123SubdomainMaxLength)
}

// sanitize lowercases s and replaces every other character than letters,
// digits and '-' by '-'. Dots go too: "a-.b" is not a valid name, and the
// hash appended to a sanitized name already keeps it unique.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, s)
}

// withHash cuts prefix so that "<prefix>-<hash of full>" fits in max
// characters, trims what may not end or start a name, and appends the hash.
func withHash(prefix, full string, max int) string {
	sum := sha256.Sum256([]byte(full))
	h := hex.EncodeToString(sum[:])[:hashLength]
	if len(prefix) > max-hashLength-1 {
		prefix = prefix[:max-hashLength-1]
	}
	prefix = strings.Trim(prefix, "-")
	if prefix == "" {
		return h
	}
	return prefix + "-" + h
}

// ClusterBindingRevisionNamespace holds the ControllerRevisions of
// ClusterResourceBindings, which have no namespace of their own; those of
// a ResourceBinding live in its namespace.
const ClusterBindingRevisionNamespace = "shepherd-system"

// RevisionNamespace is where the rollout revisions of the binding ref are kept.
func RevisionNamespace(ref BindingRef) string {
	if ref.Namespace == "" {
		return ClusterBindingRevisionNamespace
	}
	return ref.Namespace
}

// RevisionName names the ControllerRevision holding a binding's revision:
// `<binding-name>-<revision>`, with `crb-` before the name of a
// ClusterResourceBinding's so it cannot meet a ResourceBinding's of the
// same name in the same namespace.
func RevisionName(ref BindingRef, revision string) string {
	name := ref.Name
	if ref.Namespace == "" {
		name = "crb-" + name
	}
	if max := 253 - len(revision) - 1; len(name) > max {
		name = strings.TrimRight(name[:max], "-.")
	}
	return name + "-" + revision
}
