package interpreter

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Custom is what a ResourceInterpreterCustomization says about a kind,
// compiled (package interpreter/custom). A zero field keeps the built-in
// knowledge of the kind, if any.
type Custom struct {
	// Replicas returns the template's replicas.
	Replicas func(obj *unstructured.Unstructured) (int64, error)
	// ReplicasPath is the field a cluster's share is written to.
	ReplicasPath []string
	// PodSpec is the field of the pod spec one replica runs.
	PodSpec []string
	// Summed are the status fields summed on the hub.
	Summed []string
	// ObservesGeneration, when set, says whether the status carries
	// observedGeneration.
	ObservesGeneration *bool
	// Dependencies returns what the template needs beside it.
	Dependencies func(obj *unstructured.Unstructured) ([]Dependency, error)
	// Retain are fields whose member values every apply keeps.
	Retain [][]string
}

var (
	customMu  sync.RWMutex
	customs   = map[schema.GroupKind]*Custom{}
	listeners []func(schema.GroupKind)
)

// SetCustom makes c the customization of gk, over its built-in knowledge.
func SetCustom(gk schema.GroupKind, c *Custom) {
	customMu.Lock()
	customs[gk] = c
	customMu.Unlock()
	changed(gk)
}

// ClearCustom removes gk's customization: the built-in knowledge, if any,
// applies again.
func ClearCustom(gk schema.GroupKind) {
	customMu.Lock()
	delete(customs, gk)
	customMu.Unlock()
	changed(gk)
}

// OnCustomChange registers f to be called with the kind whose
// customization was set or cleared, once the change is visible: templates
// of that kind bound before must be interpreted again (their replicas, for
// one), though they did not change.
func OnCustomChange(f func(schema.GroupKind)) {
	customMu.Lock()
	defer customMu.Unlock()
	listeners = append(listeners, f)
}

func changed(gk schema.GroupKind) {
	customMu.RLock()
	ls := slices.Clone(listeners)
	customMu.RUnlock()
	for _, f := range ls {
		f(gk)
	}
}

// lookup returns what Shepherd knows of gk: the built-in entry with the
// customization, if any, laid over it; nil when neither exists.
func lookup(gk schema.GroupKind) *kind {
	customMu.RLock()
	c := customs[gk]
	customMu.RUnlock()
	b := kinds[gk]
	if c == nil {
		return b
	}
	k := &kind{}
	if b != nil {
		*k = *b
	}
	if c.Replicas != nil {
		k.replicasFn, k.job, k.pod = c.Replicas, false, false
	}
	if c.ReplicasPath != nil {
		k.replicas = c.ReplicasPath
	}
	if c.PodSpec != nil {
		k.podSpec = c.PodSpec
	}
	if c.Summed != nil {
		k.summed = c.Summed
	}
	if c.ObservesGeneration != nil {
		k.observesGeneration = *c.ObservesGeneration
	}
	if c.Dependencies != nil {
		k.dependenciesFn = c.Dependencies
	}
	if c.Retain != nil {
		k.retain = c.Retain
	}
	return k
}

// FieldPath turns a JSON pointer ("/spec/replicas") into a field path,
// undoing the pointer's escapes (~1 is /, ~0 is ~). ok is false for a
// string that is not a pointer to a field.
func FieldPath(pointer string) ([]string, bool) {
	if !strings.HasPrefix(pointer, "/") || pointer == "/" {
		return nil, false
	}
	parts := strings.Split(pointer[1:], "/")
	for i, p := range parts {
		if p == "" {
			return nil, false
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts, true
}
