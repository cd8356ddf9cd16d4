package overrides

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// applyPlaintext applies one JSON patch operation to the whole object.
func applyPlaintext(obj *unstructured.Unstructured, p *policyv1alpha1.PlaintextOverrider) error {
	if policyv1alpha1.TouchesIdentity(p.Path) {
		return fmt.Errorf("%s %s: Shepherd keeps what the object is and which object it is (apiVersion, kind, metadata's name, namespace, generateName, uid, resourceVersion, ownerReferences and finalizers); target another field", p.Operator, p.Path)
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	if doc, err = patchOne(doc, p.Operator, p.Path, p.Value); err != nil {
		return err
	}
	// util/json keeps whole numbers int64, as unstructured objects hold them.
	m := map[string]any{}
	if err := utiljson.Unmarshal(doc, &m); err != nil {
		return err
	}
	obj.Object = m
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return fmt.Errorf("%s %s leaves the object without apiVersion or kind", p.Operator, p.Path)
	}
	return nil
}

// applyField patches the JSON or YAML document held in a string field.
func applyField(obj *unstructured.Unstructured, f *policyv1alpha1.FieldOverrider) error {
	ptr, err := jsonpointer.Parse(f.FieldPath)
	if err != nil {
		return err
	}
	v, err := ptr.Get(obj.Object)
	if err != nil {
		return fmt.Errorf("fieldPath %s: %w", f.FieldPath, err)
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("fieldPath %s holds %s, not a string: fieldOverrider patches a JSON or YAML document held in a string; use plaintext for other fields", f.FieldPath, jsonpointer.Kind(v))
	}
	var out string
	switch {
	case (len(f.JSON) > 0) == (len(f.YAML) > 0):
		return errors.New("needs exactly one of json and yaml")
	case len(f.JSON) > 0:
		doc := []byte(s)
		var probe any
		if err := json.Unmarshal(doc, &probe); err != nil {
			return fmt.Errorf("fieldPath %s does not hold JSON: %v; use yaml operations for YAML", f.FieldPath, err)
		}
		for i := range f.JSON {
			op := &f.JSON[i]
			if doc, err = patchOne(doc, op.Operator, op.SubPath, op.Value); err != nil {
				return fmt.Errorf("json[%d]: %w", i, err)
			}
		}
		out = string(doc)
	default:
		doc, err := yaml.YAMLToJSON([]byte(s))
		if err != nil {
			return fmt.Errorf("fieldPath %s does not hold YAML: %v", f.FieldPath, err)
		}
		for i := range f.YAML {
			op := &f.YAML[i]
			if doc, err = patchOne(doc, op.Operator, op.SubPath, op.Value); err != nil {
				return fmt.Errorf("yaml[%d]: %w", i, err)
			}
		}
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return err
		}
		out = string(y)
	}
	return ptr.Set(obj.Object, out)
}

// patchOne applies one operation to a JSON document. Errors read
// "<op> <path>: <reason>".
func patchOne(doc []byte, op policyv1alpha1.OverriderOperator, path string, value apiextensionsv1.JSON) ([]byte, error) {
	if _, err := jsonpointer.Parse(path); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, path, err)
	}
	hasValue := len(value.Raw) > 0
	if err := checkValue(value.Raw); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, path, err)
	}
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
		if !hasValue {
			return nil, fmt.Errorf("%s %s needs a value", op, path)
		}
	case policyv1alpha1.OverriderOpRemove:
		if hasValue {
			return nil, fmt.Errorf("remove %s takes no value; drop the value", path)
		}
	default:
		return nil, fmt.Errorf("operator %q: use add, remove or replace", op)
	}
	o := jsonpatch.Operation{"op": rawString(string(op)), "path": rawString(path)}
	if hasValue {
		raw := json.RawMessage(value.Raw)
		o["value"] = &raw
	}
	out, err := jsonpatch.Patch{o}.Apply(doc)
	if err != nil {
		reason := err
		switch {
		case errors.Is(err, jsonpatch.ErrMissing):
			reason = jsonpointer.ErrNotFound
		case errors.Is(err, jsonpatch.ErrInvalidIndex):
			reason = errors.New("array index out of range")
		}
		return nil, fmt.Errorf("%s %s: %w", op, path, reason)
	}
	return out, nil
}

func rawString(s string) *json.RawMessage {
	b, _ := json.Marshal(s)
	raw := json.RawMessage(b)
	return &raw
}

// checkValue bounds an operation's value: at most
// MaxOverrideValueBytes of JSON, nested at most MaxOverrideValueDepth
// deep. The depth is counted on the raw bytes, before anything decodes
// them.
func checkValue(raw []byte) error {
	if n := len(raw); n > policyv1alpha1.MaxOverrideValueBytes {
		return fmt.Errorf("the value is %d bytes of JSON, more than the %d an override value may hold; put large content in the template itself", n, policyv1alpha1.MaxOverrideValueBytes)
	}
	if d := jsonDepth(raw); d > policyv1alpha1.MaxOverrideValueDepth {
		return fmt.Errorf("the value nests %d levels deep, more than the %d an override value may", d, policyv1alpha1.MaxOverrideValueDepth)
	}
	return nil
}

// jsonDepth is how deeply objects and arrays nest in a JSON document.
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
