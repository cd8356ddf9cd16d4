package managerconfig

import (
	"context"
	"fmt"
	"time"
)

// DefaultStopGrace is how long Run waits, once told to stop, for a manager
// that does not stop: past controller-runtime's graceful shutdown timeout
// (30 s by default), which bounds the runnables once they started.
const DefaultStopGrace = 45 * time.Second

// Starter is what Run starts: a controller-runtime manager.
type Starter interface {
	Start(ctx context.Context) error
}

// Run starts mgr and returns what its Start returns, or an error once ctx
// has ended and mgr has not stopped within grace (not positive:
// DefaultStopGrace). A manager told to stop before its caches synced (its
// API server unreachable since it started) waits in Start for them to
// sync, spinning, for as long as the API server stays away: a process that
// was told to stop then stops anyway, with the error saying why, and what
// it abandons ends with it.
func Run(ctx context.Context, mgr Starter, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("still running %s after it was told to stop: its caches may never have synced (was the API server unreachable?); stopping without it", grace)
	}
}
