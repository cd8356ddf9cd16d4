package framework_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// limitArgs are the args of a test plugin with one tunable.
type limitArgs struct {
	MaxClusters int64 `json:"maxClusters"`
	Label       string
}

func (a limitArgs) Validate() error {
	if a.MaxClusters < 1 {
		return &framework.FieldError{Field: "maxClusters", Message: "must be positive"}
	}
	return nil
}

func TestDecodeArgs(t *testing.T) {
	defaults := limitArgs{MaxClusters: 3, Label: "x"}
	for _, tc := range []struct {
		raw  string
		want limitArgs
		err  string
	}{
		{raw: "", want: defaults},
		{raw: "null", want: defaults},
		{raw: "{}", want: defaults},
		{raw: `{"maxClusters": 7}`, want: limitArgs{MaxClusters: 7, Label: "x"}},
		{raw: `{"maxClusters": 0}`, err: "maxClusters: must be positive"},
		{raw: `{"maxClusters": "7"}`, err: "maxClusters: cannot take a JSON string; want int64"},
		{raw: `{"maxCluster": 7}`, err: "maxCluster: unknown field"},
		{raw: `{"MaxClusters": 7}`, err: "MaxClusters: unknown field"}, // case-sensitive, like the API
		{raw: `{"maxClusters": 2, "maxClusters": 3}`, err: "maxClusters: given twice"},
		{raw: `[1]`, err: "not a valid document"},
	} {
		got, err := framework.DecodeArgs(json.RawMessage(tc.raw), defaults)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: want an error with %q, got %v", tc.raw, tc.err, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestNoArgs(t *testing.T) {
	for _, ok := range []string{"", "null", "{}", " {} "} {
		if err := framework.NoArgs(json.RawMessage(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	err := framework.NoArgs(json.RawMessage(`{"weight": 2}`))
	var fe *framework.FieldError
	if !errors.As(err, &fe) || fe.Field != "weight" || !strings.Contains(fe.Message, "takes no arguments") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestNewPassesArgs: each plugin is built with its own args from the
// profile, the others with none, and args for a plugin the profile does not
// run are refused.
func TestNewPassesArgs(t *testing.T) {
	got := map[string]string{}
	factory := func(name string) framework.Factory {
		return func(args json.RawMessage) (framework.Plugin, error) {
			got[name] = string(args)
			return &fakePlugin{name: name, filter: func(int) *framework.Status { return nil }}, nil
		}
	}
	reg := framework.Registry{"A": factory("A"), "B": factory("B")}
	prof := framework.Profile{Name: "p", Filters: []string{"A", "B"}}.WithArgs("B", json.RawMessage(`{"n":1}`))
	if _, err := framework.New(reg, prof); err != nil {
		t.Fatal(err)
	}
	if got["A"] != "" || got["B"] != `{"n":1}` {
		t.Errorf("args passed: %q", got)
	}
	_, err := framework.New(reg, prof.WithArgs("C", json.RawMessage(`{}`)))
	if err == nil || !strings.Contains(err.Error(), `args for plugin "C", which the profile does not run`) {
		t.Errorf("args for a plugin not run: %v", err)
	}
	reg["B"] = func(args json.RawMessage) (framework.Plugin, error) {
		return nil, framework.NoArgs(args)
	}
	if _, err := framework.New(reg, prof); err == nil || !strings.Contains(err.Error(), `building plugin "B": n: unknown field`) {
		t.Errorf("bad args: %v", err)
	}
}
