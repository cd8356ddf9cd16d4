package interpreter

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// A component's replicasPath is a JSON pointer (RFC 6901) into the
// workload: object keys by name, list elements by index
// (/spec/workerGroups/1/replicas). A rule's result is checked against the
// object it was read from: the pointer must name an integer field that
// holds the component's replicas, so that writing a cluster's share there
// (ReviseComponents) changes exactly that component.

// replicasPathHelp ends the messages about a replicasPath.
const replicasPathHelp = "give the JSON pointer of the integer field that holds the component's replicas, e.g. /spec/workerGroups/1/replicas"

// kindOf names a value found where an integer was expected: a number
// itself, another value by its JSON type.
func kindOf(v any) string {
	if n, ok := v.(float64); ok {
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return jsonpointer.Kind(v)
}

// checkReplicasPaths checks every component's replicasPath against obj,
// the workload the components were read from: it must name an integer
// field holding the component's replicas. The error names the component,
// the pointer and the fix.
func checkReplicasPaths(obj *unstructured.Unstructured, cs []Component) error {
	for i, c := range cs {
		if c.ReplicasPath == "" {
			continue
		}
		at := fmt.Sprintf("component [%d] %q: replicasPath %q", i, c.Name, c.ReplicasPath)
		p, err := jsonpointer.ParseField(c.ReplicasPath)
		if err != nil {
			return fmt.Errorf("component [%d] %q: replicasPath %w; %s", i, c.Name, err, replicasPathHelp)
		}
		v, err := p.Get(obj.Object)
		if err != nil {
			return fmt.Errorf("%s names nothing in the object (%w); %s", at, err, replicasPathHelp)
		}
		n, ok := jsonpointer.Integer(v)
		if !ok {
			return fmt.Errorf("%s holds %s, not an integer; %s", at, kindOf(v), replicasPathHelp)
		}
		if n != int64(c.Replicas) {
			return fmt.Errorf("%s holds %d, not the component's %d replicas; point it at the field the replicas are read from, or read the replicas from that field", at, n, c.Replicas)
		}
	}
	return nil
}

// ReviseComponents returns, per target cluster, obj revised for the
// cluster's share of a workload whose components were divided over
// clusters (the binding's spec.dividedComponents): each component's
// replicasPath is set to the replicas the target lists of it, 0 for a
// component it does not list. components are the binding's
// spec.components, each with its replicasPath (placement.DividesComponents
// divides only such workloads). obj is not modified. An error names the
// component whose replicasPath names no integer field of obj.
func ReviseComponents(obj *unstructured.Unstructured, components []workv1alpha1.Component, targets []workv1alpha1.TargetCluster) (map[string]*unstructured.Unstructured, error) {
	paths := make([]jsonpointer.Pointer, len(components))
	for i, c := range components {
		if c.ReplicasPath == "" {
			return nil, fmt.Errorf("component %q has no replicasPath: a cluster's share of it cannot be written", c.Name)
		}
		p, err := jsonpointer.ParseField(c.ReplicasPath)
		if err != nil {
			return nil, fmt.Errorf("component %q: replicasPath %w", c.Name, err)
		}
		if v, err := p.Get(obj.Object); err != nil {
			return nil, fmt.Errorf("component %q: replicasPath %q names nothing in the template (%w); %s", c.Name, c.ReplicasPath, err, replicasPathHelp)
		} else if _, ok := jsonpointer.Integer(v); !ok {
			return nil, fmt.Errorf("component %q: replicasPath %q holds %s in the template, not an integer; %s", c.Name, c.ReplicasPath, kindOf(v), replicasPathHelp)
		}
		paths[i] = p
	}
	out := make(map[string]*unstructured.Unstructured, len(targets))
	for _, t := range targets {
		share := make(map[string]int32, len(t.Components))
		for _, tc := range t.Components {
			share[tc.Name] = tc.Replicas
		}
		m := obj.DeepCopy()
		for i, c := range components {
			if err := paths[i].Set(m.Object, int64(share[c.Name])); err != nil {
				return nil, fmt.Errorf("component %q: replicasPath %q: %w", c.Name, c.ReplicasPath, err)
			}
		}
		out[t.Name] = m
	}
	return out, nil
}
