package resourceselector

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/shepherd-io/shepherd/pkg/names"
)

// shepherdGroupSuffix ends the API groups of Shepherd's own kinds.
const shepherdGroupSuffix = "shepherd.io"

// localGroups are API groups whose every kind describes the hub itself or
// is not a stored object at all (reviews), so none is ever propagated.
var localGroups = map[string]bool{
	"authentication.k8s.io":        true,
	"authorization.k8s.io":         true,
	"coordination.k8s.io":          true, // leases: leader election, node heartbeats
	"events.k8s.io":                true,
	"flowcontrol.apiserver.k8s.io": true,
	"apiregistration.k8s.io":       true,
	"internal.apiserver.k8s.io":    true,
	"certificates.k8s.io":          true,
	"discovery.k8s.io":             true, // EndpointSlices are derived from Services
	// The metrics APIs serve live readings (resource, custom, external),
	// never stored objects.
	"metrics.k8s.io":          true,
	"custom.metrics.k8s.io":   true,
	"external.metrics.k8s.io": true,
	"storagemigration.k8s.io": true,
}

// localKinds are kinds of other groups that only make sense in the
// cluster that holds them.
var localKinds = map[schema.GroupKind]bool{
	{Kind: "Node"}:            true,
	{Kind: "Event"}:           true,
	{Kind: "Endpoints"}:       true, // derived from Services
	{Kind: "Binding"}:         true,
	{Kind: "ComponentStatus"}: true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}: true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:          true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:   true,
}

// ExcludedKind reports whether templates of the kind are never propagated:
// Shepherd's own kinds and kinds that describe the hub itself.
func ExcludedKind(gk schema.GroupKind) bool {
	return gk.Group == shepherdGroupSuffix || strings.HasSuffix(gk.Group, "."+shepherdGroupSuffix) ||
		localGroups[gk.Group] || localKinds[gk]
}

// excludedNamespace reports whether objects of the namespace (and the
// Namespace object itself) stay on the hub: the system namespaces
// (kube-system, kube-public, kube-node-lease and any other kube-*) and
// Shepherd's execution namespaces.
func excludedNamespace(ns string) bool {
	return strings.HasPrefix(ns, "kube-") || names.IsExecutionNamespace(ns) || ns == "shepherd-system"
}

// Excluded reports whether the template is never propagated, whatever the
// policies say: an excluded kind, an object of an excluded namespace, an
// excluded Namespace, or an object the hub's API server creates for itself
// in every namespace (the "default" ServiceAccount, the "kubernetes"
// Service, the root CA ConfigMap).
func Excluded(gk schema.GroupKind, namespace, name string) bool {
	if ExcludedKind(gk) || excludedNamespace(namespace) {
		return true
	}
	if gk.Group != "" {
		return false
	}
	switch gk.Kind {
	case "Namespace":
		return excludedNamespace(name)
	case "ServiceAccount":
		return name == "default"
	case "Service":
		return namespace == "default" && name == "kubernetes"
	case "ConfigMap":
		return name == "kube-root-ca.crt"
	}
	return false
}

// ExcludedObject adds what only the object's content tells: service
// account token Secrets belong to the hub's service accounts.
func ExcludedObject(obj *unstructured.Unstructured) bool {
	gk := obj.GroupVersionKind().GroupKind()
	if Excluded(gk, obj.GetNamespace(), obj.GetName()) {
		return true
	}
	if gk == (schema.GroupKind{Kind: "Secret"}) {
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == string(corev1.SecretTypeServiceAccountToken)
	}
	return false
}
