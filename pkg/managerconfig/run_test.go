package managerconfig

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// starter is a manager whose Start returns err once ctx ends, after
// lingering (forever when lingering is negative).
type starter struct {
	err       error
	lingering time.Duration
}

func (s starter) Start(ctx context.Context) error {
	<-ctx.Done()
	if s.lingering < 0 {
		select {}
	}
	time.Sleep(s.lingering)
	return s.err
}

// TestRun: a manager that stops when told is waited for, and what it
// returns is returned; one that does not stop within the grace is left,
// with an error that says so.
func TestRun(t *testing.T) {
	failed := errors.New("lost the lease")
	for _, tc := range []struct {
		name    string
		s       starter
		wantErr string
	}{
		{"stops at once", starter{}, ""},
		{"stops with an error", starter{err: failed}, "lost the lease"},
		{"stops within the grace", starter{lingering: 10 * time.Millisecond}, ""},
		{"never stops", starter{lingering: -1}, "after it was told to stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := Run(ctx, tc.s, 200*time.Millisecond)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Run: %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
