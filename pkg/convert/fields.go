package convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	sigsjson "sigs.k8s.io/json"
)

// This file checks an object against Shepherd's Go types: unknownFields
// finds what the types have no field for (which the API server would prune
// without a word), and decodeStrict proves the rest decodes.

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// unknownFields returns the paths of the keys of v that type t has no
// field for, depth first in key order, so that each can be reported and
// dropped before the strict decode.
func unknownFields(t reflect.Type, v any, path fieldPath) []fieldPath {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A type that decodes itself (Time, Quantity, IntOrString, JSON) has
	// no fields to look into.
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, which the strict decode reports
		}
		fields := jsonFields(t)
		var out []fieldPath
		for _, k := range sortedKeys(m) {
			ft, known := fields[k]
			if !known {
				out = append(out, path.key(k))
				continue
			}
			out = append(out, unknownFields(ft, m[k], path.key(k))...)
		}
		return out
	case reflect.Slice, reflect.Array:
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		var out []fieldPath
		for i, e := range l {
			out = append(out, unknownFields(t.Elem(), e, path.index(i))...)
		}
		return out
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		var out []fieldPath
		for _, k := range sortedKeys(m) {
			out = append(out, unknownFields(t.Elem(), m[k], path.key(k))...)
		}
		return out
	default:
		return nil
	}
}

// jsonFields maps the JSON names of a struct's fields, those of inlined
// (embedded or ",inline") structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if (f.Anonymous && name == "") || slices.Contains(strings.Split(opts, ","), "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// decodeStrict decodes obj into a new T as the API server would, refusing
// unknown and duplicate fields and values of the wrong type.
func decodeStrict[T any](obj map[string]any) (*T, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := new(T)
	strict, err := sigsjson.UnmarshalStrict(data, out)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return out, nil
}

// fieldPath is a path into an object: its segments (keys, and indexes
// as ints) and how the report prints it.
type fieldPath struct {
	text  string
	parts []any
}

func (p fieldPath) key(k string) fieldPath {
	return fieldPath{text: join(p.text, k), parts: append(slices.Clip(p.parts), k)}
}

func (p fieldPath) index(i int) fieldPath {
	return fieldPath{text: fmt.Sprintf("%s[%d]", p.text, i), parts: append(slices.Clip(p.parts), i)}
}

// deletePath removes the field at a path unknownFields returned.
func deletePath(obj map[string]any, p fieldPath) {
	var cur any = obj
	for _, s := range p.parts[:len(p.parts)-1] {
		switch s := s.(type) {
		case string:
			m, _ := cur.(map[string]any)
			cur = m[s]
		case int:
			l, _ := cur.([]any)
			if s >= len(l) {
				return
			}
			cur = l[s]
		}
	}
	if m, ok := cur.(map[string]any); ok {
		delete(m, p.parts[len(p.parts)-1].(string))
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
