package overrides

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// Kinds says where a kind keeps the pod spec its replicas run (nil for a
// kind without one): imageOverrider without a predicate, commandOverrider
// and argsOverrider work on those kinds only. The process's interpreter
// answers, so a kind a ResourceInterpreterCustomization teaches (its
// podSpecPath) is overridden like a built-in workload.
type Kinds interface {
	PodSpecPath(gk schema.GroupKind) []string
}

func podSpecPath(kinds Kinds, obj *unstructured.Unstructured) ([]string, bool) {
	p := kinds.PodSpecPath(obj.GroupVersionKind().GroupKind())
	return p, p != nil
}

// containerLists are the pod spec's lists of containers, in the order
// overriders visit them.
var containerLists = []string{"containers", "initContainers"}

// eachContainer calls fn with every container, then every init container,
// of the pod spec at specPath, and where names it for messages
// ("spec.template.spec.containers[0]").
func eachContainer(obj *unstructured.Unstructured, specPath []string, fn func(c map[string]any, where string) error) error {
	for _, list := range containerLists {
		path := append(slices.Clone(specPath), list)
		v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil {
			return err
		}
		if !found || v == nil {
			continue
		}
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s holds %s, not a list", strings.Join(path, "."), jsonpointer.Kind(v))
		}
		for i, item := range items {
			c, ok := item.(map[string]any)
			if !ok {
				return fmt.Errorf("%s[%d] holds %s, not a container", strings.Join(path, "."), i, jsonpointer.Kind(item))
			}
			if err := fn(c, fmt.Sprintf("%s[%d]", strings.Join(path, "."), i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyCommandArgs applies a commandOverrider (field "command") or an
// argsOverrider (field "args") to the named container or init container,
// as Karmada does: add appends the values (creating the list), remove
// drops every item equal to one of them. Karmada has no replace; neither
// does the API here.
func applyCommandArgs(kinds Kinds, obj *unstructured.Unstructured, field string, o *policyv1alpha1.CommandArgsOverrider) error {
	specPath, ok := podSpecPath(kinds, obj)
	if !ok {
		return fmt.Errorf("%s has no containers; narrow resourceSelectors to workloads", obj.GetKind())
	}
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove:
	default:
		return fmt.Errorf("operator %q: use add or remove", o.Operator)
	}
	var names []string
	found := false
	err := eachContainer(obj, specPath, func(c map[string]any, where string) error {
		name, _ := c["name"].(string)
		names = append(names, name)
		if name != o.ContainerName {
			return nil
		}
		found = true
		current, err := stringList(c[field])
		if err != nil {
			return fmt.Errorf("%s.%s: %w", where, field, err)
		}
		var next []string
		if o.Operator == policyv1alpha1.OverriderOpAdd {
			if len(o.Value) == 0 {
				return nil
			}
			next = append(current, o.Value...)
		} else {
			if c[field] == nil {
				return nil
			}
			next = slices.DeleteFunc(current, func(s string) bool { return slices.Contains(o.Value, s) })
		}
		items := make([]any, len(next))
		for i, s := range next {
			items[i] = s
		}
		c[field] = items
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("container %q not found in %s %s (containers: %s); fix containerName or narrow resourceSelectors",
			o.ContainerName, obj.GetKind(), obj.GetName(), strings.Join(names, ", "))
	}
	return nil
}

// stringList reads a command or args list; nil reads as empty.
func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("holds %s, not a list of strings", jsonpointer.Kind(v))
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("item %d holds %s, not a string", i, jsonpointer.Kind(item))
		}
		out[i] = s
	}
	return out, nil
}
