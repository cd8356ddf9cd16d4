package firstseen

import (
	"testing"
	"time"
)

// TestSince: a value counts from when it was first read; read again
// unchanged it keeps that time; a new value is seen changed at the read
// that finds it; the first value of a key, or one read after Forget, is
// not seen changed. Keys are apart.
func TestSince(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var tr Tracker[int]
	for _, step := range []struct {
		name        string
		key         string
		value       int
		at          time.Duration // since start
		forget      bool          // Forget key before reading
		want        time.Duration
		wantChanged bool
	}{
		{name: "first read", key: "a", value: 1, at: 0, want: 0},
		{name: "read again unchanged", key: "a", value: 1, at: 10 * time.Second, want: 0},
		{name: "another key", key: "b", value: 1, at: 11 * time.Second, want: 11 * time.Second},
		{name: "changed", key: "a", value: 2, at: 20 * time.Second, want: 20 * time.Second, wantChanged: true},
		{name: "changed, read again", key: "a", value: 2, at: 30 * time.Second, want: 20 * time.Second, wantChanged: true},
		{name: "changed back", key: "a", value: 1, at: 40 * time.Second, want: 40 * time.Second, wantChanged: true},
		{name: "forgotten", key: "a", value: 1, at: 50 * time.Second, forget: true, want: 50 * time.Second},
	} {
		if step.forget {
			tr.Forget(step.key)
		}
		got, changed := tr.Since(step.key, step.value, start.Add(step.at))
		if !got.Equal(start.Add(step.want)) || changed != step.wantChanged {
			t.Errorf("%s: since %s changed %v, want %s %v", step.name, got.Sub(start), changed, step.want, step.wantChanged)
		}
	}
}
