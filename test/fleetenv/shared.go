package fleetenv

import (
	"sync"
	"testing"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// Shared is the fleet a test package's heavy tests share, as
// testenv.Shared is the hub they share: it starts when a test first calls
// Fleet, never in TestMain, so the package's pure tests never wait for it,
// and Stop (called by TestMain after the tests) stops it if it started.
// Each test keeps to its own namespace, and one that takes part of the
// fleet away puts it back in its cleanup.
type Shared struct {
	// Suite names the fleet's temporary directory (StartFleet's suite).
	Suite string
	// Options start the fleet; DataDir and Logger are set by StartFleet.
	Options func() localfleet.Options

	once sync.Once
	env  *FleetEnv
	err  error
}

// Fleet returns the package's fleet, starting it on the first call. It
// skips the test under -short and fails it when the fleet could not start.
func (s *Shared) Fleet(t testing.TB) *FleetEnv {
	t.Helper()
	testenv.Heavy(t)
	s.once.Do(func() {
		var opts localfleet.Options
		if s.Options != nil {
			opts = s.Options()
		}
		s.env, s.err = StartFleet(s.Suite, opts)
	})
	if s.err != nil {
		t.Fatalf("the package's fleet: %v", s.err)
	}
	return s.env
}

// Stop stops the fleet if a test started it.
func (s *Shared) Stop() {
	if s.env != nil {
		s.env.Stop()
	}
}
