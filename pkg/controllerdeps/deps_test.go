package controllerdeps

import (
	"errors"
	"testing"
)

// TestOnce: a key's set-up runs once among the Deps of one WithDefaults
// call, a failed one is tried again, and Deps made apart do not share.
func TestOnce(t *testing.T) {
	d := Deps{once: &onceSet{done: map[string]bool{}}}
	copied := d // controllers get Deps by value
	runs := map[string]int{}
	run := func(key string, err error) func() error {
		return func() error { runs[key]++; return err }
	}
	for _, tc := range []struct {
		d       Deps
		key     string
		err     error
		wantErr bool
		want    int // runs of key after the call
	}{
		{d, "works-by-binding", nil, false, 1},
		{copied, "works-by-binding", nil, false, 1},
		{d, "by-target ResourceBinding", errors.New("boom"), true, 1},
		{d, "by-target ResourceBinding", nil, false, 2},
		{d, "by-target ResourceBinding", nil, false, 2},
		{Deps{once: &onceSet{done: map[string]bool{}}}, "works-by-binding", nil, false, 2},
		{Deps{}, "unshared", nil, false, 1},
		{Deps{}, "unshared", nil, false, 2},
	} {
		err := tc.d.Once(tc.key, run(tc.key, tc.err))
		if (err != nil) != tc.wantErr {
			t.Fatalf("Once(%q): error %v, want error %v", tc.key, err, tc.wantErr)
		}
		if runs[tc.key] != tc.want {
			t.Fatalf("Once(%q): %d runs, want %d", tc.key, runs[tc.key], tc.want)
		}
	}
}
