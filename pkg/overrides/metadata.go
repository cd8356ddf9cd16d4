package overrides

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func applyLabels(obj *unstructured.Unstructured, o *policyv1alpha1.LabelAnnotationOverrider) error {
	return applyStringMap(obj, "labels", o, func(k, v string) []string {
		return append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...)
	})
}

func applyAnnotations(obj *unstructured.Unstructured, o *policyv1alpha1.LabelAnnotationOverrider) error {
	return applyStringMap(obj, "annotations", o, func(k, _ string) []string {
		return validation.IsQualifiedName(strings.ToLower(k))
	})
}

// applyStringMap changes metadata.labels or metadata.annotations as
// Karmada does: add sets every key of the overrider's value; remove
// deletes the keys that exist; replace sets the keys that exist and
// ignores the others. Keys and values that the API server would refuse
// are an error here, where the message can name the policy.
func applyStringMap(obj *unstructured.Unstructured, field string, o *policyv1alpha1.LabelAnnotationOverrider, invalid func(k, v string) []string) error {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return fmt.Errorf("operator %q: use add, remove or replace", o.Operator)
	}
	m, _, err := unstructured.NestedStringMap(obj.Object, "metadata", field)
	if err != nil {
		return fmt.Errorf("metadata.%s: %w", field, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	keys := make([]string, 0, len(o.Value))
	for k := range o.Value {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	changed := false
	for _, k := range keys {
		v := o.Value[k]
		_, exists := m[k]
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
			if o.Operator == policyv1alpha1.OverriderOpReplace && !exists {
				continue
			}
			if errs := invalid(k, v); len(errs) > 0 {
				return fmt.Errorf("%s %q=%q: %s", strings.TrimSuffix(field, "s"), k, v, strings.Join(errs, "; "))
			}
			m[k] = v
			changed = true
		case policyv1alpha1.OverriderOpRemove:
			if exists {
				delete(m, k)
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	return unstructured.SetNestedStringMap(obj.Object, m, "metadata", field)
}
