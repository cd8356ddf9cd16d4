package execution

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What Karmada's execution controller writes on every member object it
// creates or updates: the proof, stored on the object, that Karmada owns
// it (applyStrategy.takeOverFrom: Karmada takes over nothing else).
const (
	karmadaManagedLabel = "karmada.io/managed"
	// Karmada v1.10 and later record the Work as annotations, earlier
	// versions as labels; either is accepted.
	karmadaWorkName      = "work.karmada.io/name"
	karmadaWorkNamespace = "work.karmada.io/namespace"
	// karmadaExecutionPrefix begins the namespace of every Work Karmada
	// writes (one per member cluster).
	karmadaExecutionPrefix = "karmada-es-"
)

// writtenByKarmada reports whether obj carries every mark of Karmada's
// execution controller: its managed label and the name and namespace of
// the Work that wrote it. A label alone is not enough: anyone can set
// one, and an object someone copied from a Karmada member keeps it, but
// not the Work's coordinates in an execution namespace.
func writtenByKarmada(obj metav1.Object) bool {
	if obj.GetLabels()[karmadaManagedLabel] != "true" {
		return false
	}
	name, ns := karmadaMark(obj, karmadaWorkName), karmadaMark(obj, karmadaWorkNamespace)
	return name != "" && strings.HasPrefix(ns, karmadaExecutionPrefix) && len(ns) > len(karmadaExecutionPrefix)
}

// karmadaMark reads one of Karmada's marks, an annotation or (before
// v1.10) a label.
func karmadaMark(obj metav1.Object, key string) string {
	if v := obj.GetAnnotations()[key]; v != "" {
		return v
	}
	return obj.GetLabels()[key]
}
