// Package jsonpointer reads and writes JSON pointers (RFC 6901) into
// objects as unstructured holds them (map[string]any, []any and scalars):
// object members by key, list elements by index (/spec/workerGroups/1/replicas).
// It is the one parser of pointers in Shepherd: overriders, a
// customization's replicasPath and field paths, and the JSON patches the
// controllers write all go through it.
package jsonpointer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrNotFound is what a pointer to nothing is: Get and Set return a
// *NotFoundError, which says which step found nothing.
var ErrNotFound = errors.New("path not found")

// Pointer is a parsed JSON pointer: its reference tokens, unescaped. The
// empty Pointer names the whole document.
type Pointer []string

// Parse parses s, which must start with "/" (the whole document, the empty
// string, is not a pointer Shepherd takes) and escape only ~ (as ~0) and /
// (as ~1). An empty token is an empty key, as the RFC says.
func Parse(s string) (Pointer, error) {
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with /", s)
	}
	tokens := strings.Split(s[1:], "/")
	for i, t := range tokens {
		if !strings.Contains(t, "~") {
			continue
		}
		for rest := t; ; {
			j := strings.IndexByte(rest, '~')
			if j < 0 {
				break
			}
			if j+1 == len(rest) || (rest[j+1] != '0' && rest[j+1] != '1') {
				return nil, fmt.Errorf("%q is not a JSON pointer: %q escapes badly (~0 is ~, ~1 is /)", s, t)
			}
			rest = rest[j+2:]
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// ParseField parses s as Parse does and also refuses an empty token: a
// pointer to a field of a Kubernetes object, where no key is empty
// ("/spec//replicas" and "/" are typos, not fields).
func ParseField(s string) (Pointer, error) {
	p, err := Parse(s)
	if err != nil {
		return nil, err
	}
	for i, t := range p {
		if t == "" {
			return nil, fmt.Errorf("%q is not a JSON pointer to a field: token %d is empty", s, i+1)
		}
	}
	return p, nil
}

// Escape escapes one reference token: ~ as ~0, / as ~1.
func Escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// String writes the pointer back, escaped.
func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// where names the value the pointer leads to, for messages.
func (p Pointer) where() string {
	if len(p) == 0 {
		return "the object"
	}
	return p.String()
}

// NotFoundError says which step of a pointer found nothing: the value At
// names holds no Token. It is ErrNotFound to errors.Is.
type NotFoundError struct {
	At    Pointer
	Token string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s holds no %q", e.At.where(), e.Token)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// notFound says that the value at p holds nothing under token.
func (p Pointer) notFound(token string) error {
	return &NotFoundError{At: p, Token: token}
}

// Get returns the value the pointer names in doc. An error wraps
// ErrNotFound and names the first step that finds nothing.
func (p Pointer) Get(doc any) (any, error) {
	cur := doc
	for i, t := range p {
		next, ok := child(cur, t)
		if !ok {
			return nil, p[:i].notFound(t)
		}
		cur = next
	}
	return cur, nil
}

// Set replaces the value the pointer names in doc, which must exist (it
// adds nothing). The empty pointer cannot be set.
func (p Pointer) Set(doc any, v any) error {
	if len(p) == 0 {
		return errors.New("the whole object cannot be replaced through a JSON pointer")
	}
	parent, err := p[:len(p)-1].Get(doc)
	if err != nil {
		return err
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		if _, ok := c[last]; ok {
			c[last] = v
			return nil
		}
	case []any:
		if i, ok := index(c, last); ok {
			c[i] = v
			return nil
		}
	}
	return p[:len(p)-1].notFound(last)
}

// child is the value under token in v: an object's member, a list's element.
func child(v any, token string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		next, ok := c[token]
		return next, ok
	case []any:
		if i, ok := index(c, token); ok {
			return c[i], true
		}
	}
	return nil, false
}

// index reads token as an index of l: decimal digits without a leading
// zero (RFC 6901), below its length.
func index(l []any, token string) (int, bool) {
	if token == "" || strings.Trim(token, "0123456789") != "" || (len(token) > 1 && token[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(token)
	return i, err == nil && i < len(l)
}

// Integer reads v as an integer: an int64 (or int, int32), a whole
// float64 (what a number decoded from JSON without a schema may be), or a
// json.Number of a whole number (a decoder's UseNumber). A string is not
// a number, whatever it holds.
func Integer(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		if err != nil {
			return 0, false
		}
		return Integer(f)
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

// Kind names the JSON type of v, for messages: "an object", "a list",
// "a string", "a boolean", "a number", "null".
func Kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, int, int32:
		return "a number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}
