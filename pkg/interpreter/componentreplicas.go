package interpreter

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// A component's replicasPath is a JSON pointer (RFC 6901) into the
// workload: object keys by name, list elements by index
// (/spec/workerGroups/1/replicas). A rule's result is checked against the
// object it was read from: the pointer must name an integer field that
// holds the component's replicas, so that writing a cluster's share there
// (ReviseComponents) changes exactly that component.

// replicasPathHelp ends the messages about a replicasPath.
const replicasPathHelp = "give the JSON pointer of the integer field that holds the component's replicas, e.g. /spec/workerGroups/1/replicas"

// jsonPointer is a parsed JSON pointer: its reference tokens, unescaped.
type jsonPointer []string

// parseJSONPointer parses p: it starts with "/", names no empty key and
// escapes only ~ (~0) and / (~1).
func parseJSONPointer(p string) (jsonPointer, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		if t == "" {
			return nil, fmt.Errorf("%q is not a JSON pointer to a field: token %d is empty", p, i+1)
		}
		for j := strings.IndexByte(t, '~'); j >= 0; j = strings.IndexByte(t, '~') {
			if j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("%q is not a JSON pointer: %q escapes badly (~0 is ~, ~1 is /)", p, tokens[i])
			}
			t = t[j+2:]
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tokens[i], "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// String writes the pointer back.
func (p jsonPointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// parent returns the value holding the pointer's last token, and that
// token; an error says which token names nothing.
func (p jsonPointer) parent(obj map[string]any) (any, string, error) {
	var cur any = obj
	for i, t := range p[:len(p)-1] {
		next, ok := pointerChild(cur, t)
		if !ok {
			return nil, "", fmt.Errorf("%s holds no %q", p[:i].where(), t)
		}
		cur = next
	}
	return cur, p[len(p)-1], nil
}

// where names the field the pointer leads to: "the object" for none.
func (p jsonPointer) where() string {
	if len(p) == 0 {
		return "the object"
	}
	return p.String()
}

// get returns the value the pointer names.
func (p jsonPointer) get(obj map[string]any) (any, error) {
	parent, last, err := p.parent(obj)
	if err != nil {
		return nil, err
	}
	v, ok := pointerChild(parent, last)
	if !ok {
		return nil, fmt.Errorf("%s holds no %q", p[:len(p)-1].where(), last)
	}
	return v, nil
}

// set replaces the value the pointer names, which must exist.
func (p jsonPointer) set(obj map[string]any, v any) error {
	parent, last, err := p.parent(obj)
	if err != nil {
		return err
	}
	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; ok {
			c[last] = v
			return nil
		}
	case []any:
		if i, ok := pointerIndex(c, last); ok {
			c[i] = v
			return nil
		}
	}
	return fmt.Errorf("%s holds no %q", p[:len(p)-1].where(), last)
}

// pointerChild is the value under token in v: a map's key, a list's index.
func pointerChild(v any, token string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		next, ok := c[token]
		return next, ok
	case []any:
		if i, ok := pointerIndex(c, token); ok {
			return c[i], true
		}
	}
	return nil, false
}

// pointerIndex reads token as an index of l: decimal digits without a
// leading zero, below its length.
func pointerIndex(l []any, token string) (int, bool) {
	if token == "" || strings.Trim(token, "0123456789") != "" || (len(token) > 1 && token[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(token)
	return i, err == nil && i < len(l)
}

// integerValue reads v as an integer: an int64, or a whole float64 (what a
// number decoded from JSON without a schema may be).
func integerValue(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n <= math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

// jsonKind names the JSON type of v, for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case nil:
		return "null"
	case float64:
		return "a number that is no integer"
	}
	return fmt.Sprintf("%T", v)
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
		p, err := parseJSONPointer(c.ReplicasPath)
		if err != nil {
			return fmt.Errorf("component [%d] %q: replicasPath %w; %s", i, c.Name, err, replicasPathHelp)
		}
		v, err := p.get(obj.Object)
		if err != nil {
			return fmt.Errorf("%s names nothing in the object (%w); %s", at, err, replicasPathHelp)
		}
		n, ok := integerValue(v)
		if !ok {
			return fmt.Errorf("%s holds %s, not an integer; %s", at, jsonKind(v), replicasPathHelp)
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
	paths := make([]jsonPointer, len(components))
	for i, c := range components {
		if c.ReplicasPath == "" {
			return nil, fmt.Errorf("component %q has no replicasPath: a cluster's share of it cannot be written", c.Name)
		}
		p, err := parseJSONPointer(c.ReplicasPath)
		if err != nil {
			return nil, fmt.Errorf("component %q: replicasPath %w", c.Name, err)
		}
		if v, err := p.get(obj.Object); err != nil {
			return nil, fmt.Errorf("component %q: replicasPath %q names nothing in the template (%w); %s", c.Name, c.ReplicasPath, err, replicasPathHelp)
		} else if _, ok := integerValue(v); !ok {
			return nil, fmt.Errorf("component %q: replicasPath %q holds %s in the template, not an integer; %s", c.Name, c.ReplicasPath, jsonKind(v), replicasPathHelp)
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
			if err := paths[i].set(m.Object, int64(share[c.Name])); err != nil {
				return nil, fmt.Errorf("component %q: replicasPath %q: %w", c.Name, c.ReplicasPath, err)
			}
		}
		out[t.Name] = m
	}
	return out, nil
}
