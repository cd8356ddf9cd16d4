package overrides

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errNotFound is what a JSON pointer to nothing yields; messages read
// "<op> <path>: path not found".
var errNotFound = errors.New("path not found")

// pointer is a parsed JSON pointer (RFC 6901).
type pointer []string

// parsePointer parses p, which must start with "/" (the API refuses the
// empty pointer, which would name the whole object).
func parsePointer(p string) (pointer, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q must start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		if strings.Contains(t, "~") {
			// ~1 is "/" and ~0 is "~"; any other "~" is malformed.
			u := strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
			if strings.Count(t, "~") != strings.Count(t, "~0")+strings.Count(t, "~1") {
				return nil, fmt.Errorf("path %q: %q is not a valid escape (use ~0 for ~ and ~1 for /)", p, t)
			}
			tokens[i] = u
		}
	}
	return tokens, nil
}

// get returns the value at ptr in doc (maps and slices as unstructured
// holds them).
func (ptr pointer) get(doc any) (any, error) {
	cur := doc
	for _, t := range ptr {
		next, err := child(cur, t)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// set replaces the existing value at ptr in doc.
func (ptr pointer) set(doc any, v any) error {
	parent, err := ptr[:len(ptr)-1].get(doc)
	if err != nil {
		return err
	}
	last := ptr[len(ptr)-1]
	switch p := parent.(type) {
	case map[string]any:
		if _, ok := p[last]; !ok {
			return errNotFound
		}
		p[last] = v
		return nil
	case []any:
		i, err := index(p, last)
		if err != nil {
			return err
		}
		p[i] = v
		return nil
	}
	return errNotFound
}

func child(v any, token string) (any, error) {
	switch c := v.(type) {
	case map[string]any:
		if next, ok := c[token]; ok {
			return next, nil
		}
	case []any:
		i, err := index(c, token)
		if err != nil {
			return nil, err
		}
		return c[i], nil
	}
	return nil, errNotFound
}

func index(s []any, token string) (int, error) {
	// RFC 6901: decimal digits, no leading zero.
	if token == "" || strings.TrimLeft(token, "0123456789") != "" || (len(token) > 1 && token[0] == '0') {
		return 0, errNotFound
	}
	i, err := strconv.Atoi(token)
	if err != nil || i >= len(s) {
		return 0, errNotFound
	}
	return i, nil
}
