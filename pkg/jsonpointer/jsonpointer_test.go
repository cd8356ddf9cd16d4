package jsonpointer

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func doc() map[string]any {
	return map[string]any{
		"spec": map[string]any{
			"replicas": int64(3),
			"a/b":      "slash",
			"m~n":      "tilde",
			"":         "empty key",
			"groups":   []any{map[string]any{"replicas": float64(2)}, map[string]any{"replicas": int64(5)}},
		},
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    Pointer
		field   bool // ParseField takes it too
	}{
		{in: "/spec/replicas", want: Pointer{"spec", "replicas"}, field: true},
		{in: "/spec/a~1b", want: Pointer{"spec", "a/b"}, field: true},
		{in: "/spec/m~0n", want: Pointer{"spec", "m~n"}, field: true},
		{in: "/~01", want: Pointer{"~1"}, field: true},
		{in: "/spec/", want: Pointer{"spec", ""}},
		{in: "/", want: Pointer{""}},
		{in: "spec/replicas", err: `"spec/replicas" is not a JSON pointer: it must start with /`},
		{in: "", err: "must start with /"},
		{in: "/spec/a~2b", err: `"a~2b" escapes badly`},
		{in: "/spec/a~", err: `"a~" escapes badly`},
		{in: "/spec/~1~", err: `"~1~" escapes badly`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			p, err := Parse(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %q, %v; want an error with %q", tc.in, p, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(p, tc.want) {
				t.Fatalf("Parse(%q) = %q, %v; want %q", tc.in, p, err, tc.want)
			}
			if p.String() != tc.in {
				t.Errorf("String() = %q, want %q", p.String(), tc.in)
			}
			_, err = ParseField(tc.in)
			if (err == nil) != tc.field {
				t.Errorf("ParseField(%q) = %v, want accepted %v", tc.in, err, tc.field)
			}
			if err != nil && !strings.Contains(err.Error(), "is not a JSON pointer to a field") {
				t.Errorf("ParseField(%q) error %q does not say why", tc.in, err)
			}
		})
	}
}

func TestGetAndSet(t *testing.T) {
	for _, tc := range []struct {
		ptr     string
		want    any
		missing string // the error when nothing is there
	}{
		{ptr: "/spec/replicas", want: int64(3)},
		{ptr: "/spec/a~1b", want: "slash"},
		{ptr: "/spec/m~0n", want: "tilde"},
		{ptr: "/spec/", want: "empty key"},
		{ptr: "/spec/groups/1/replicas", want: int64(5)},
		{ptr: "/spec/groups/2/replicas", missing: `/spec/groups holds no "2"`},
		{ptr: "/spec/groups/01/replicas", missing: `/spec/groups holds no "01"`},
		{ptr: "/spec/groups/-1", missing: `/spec/groups holds no "-1"`},
		{ptr: "/spec/groups/x", missing: `/spec/groups holds no "x"`},
		{ptr: "/status/replicas", missing: `the object holds no "status"`},
		{ptr: "/spec/replicas/deeper", missing: `/spec/replicas holds no "deeper"`},
	} {
		t.Run(tc.ptr, func(t *testing.T) {
			p, err := Parse(tc.ptr)
			if err != nil {
				t.Fatal(err)
			}
			d := doc()
			got, err := p.Get(d)
			setErr := p.Set(d, "new")
			if tc.missing != "" {
				for _, err := range []error{err, setErr} {
					if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.missing) {
						t.Errorf("error %v, want ErrNotFound saying %q", err, tc.missing)
					}
				}
				if !reflect.DeepEqual(d, doc()) {
					t.Errorf("a failed Set changed the document: %v", d)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Get = %v, %v; want %v", got, err, tc.want)
			}
			if setErr != nil {
				t.Fatalf("Set: %v", setErr)
			}
			if v, err := p.Get(d); err != nil || v != "new" {
				t.Errorf("after Set, Get = %v, %v", v, err)
			}
		})
	}
	if err := (Pointer{}).Set(doc(), 1); err == nil {
		t.Error("the empty pointer was set")
	}
	if v, err := (Pointer{}).Get("x"); err != nil || v != "x" {
		t.Errorf("the empty pointer gets %v, %v; want the document", v, err)
	}
}

func TestInteger(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{int64(-4), -4, true},
		{int(7), 7, true},
		{int32(9), 9, true},
		{float64(2), 2, true},
		{float64(2.5), 0, false},
		{math.Inf(1), 0, false},
		{math.NaN(), 0, false},
		{float64(math.MaxInt64), 0, false}, // 2^63: beyond int64
		{float64(-9223372036854775808), math.MinInt64, true},
		{json.Number("12"), 12, true},
		{json.Number("12.0"), 12, true},
		{json.Number("1e3"), 1000, true},
		{json.Number("12.5"), 0, false},
		{json.Number("99999999999999999999"), 0, false}, // beyond int64
		{json.Number("x"), 0, false},
		{"3", 0, false},
		{nil, 0, false},
		{true, 0, false},
	} {
		if got, ok := Integer(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Integer(%#v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestKind(t *testing.T) {
	for v, want := range map[any]string{"s": "a string", true: "a boolean", int64(1): "a number", 1.5: "a number", nil: "null", uint8(1): "a uint8"} {
		if got := Kind(v); got != want {
			t.Errorf("Kind(%#v) = %q, want %q", v, got, want)
		}
	}
	if Kind(map[string]any{}) != "an object" || Kind([]any{}) != "a list" {
		t.Error("containers misnamed")
	}
}

// FuzzParse: whatever Parse takes, String writes back to the same text,
// and Parse of a pointer's String is that pointer.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/spec/replicas", "/a~1b/~0", "/", "//", "/a~2", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, p.String())
		}
		q, err := Parse(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip of %q: %q, %v", s, q, err)
		}
	})
}
