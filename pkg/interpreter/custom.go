package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Custom is what a ResourceInterpreterCustomization says about a kind,
// compiled (CompileCustomization) and given to Layered.SetCustom. A
// zero field keeps the built-in knowledge of the kind, if any.
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
	// Health judges the kind's member objects (of the customization's
	// version only).
	Health HealthFunc
	// Components lists the kind's components, its result already checked
	// and its errors naming the rule (see checked; CompileCustomization
	// builds it so).
	Components func(obj *unstructured.Unstructured) ([]Component, error)
	// Sensitive marks the kind's values secret. It only ever adds: false
	// keeps the built-in answer, so no customization makes a Secret's
	// values readable in a diff, even one the API server's rule missed.
	Sensitive bool
}
