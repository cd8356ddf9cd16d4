package testenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Test tiers. `go test -short ./...` is the unit tier: it starts no API
// server (no etcd, no kube-apiserver), so it runs in minutes on a laptop.
// `go test ./...` runs everything. The one rule that keeps them apart:
//
//   - a test that needs an API server says so first, with Heavy(t), or
//     through a helper that calls it (Shared.Hub, membershiptest.StartHub
//     and StartMember); Start itself refuses under -short (ErrShort), so
//     a test that forgets fails in the unit tier instead of starting a hub;
//   - a package's TestMain never starts one eagerly: a package shares its
//     hub through a Shared (a whole fleet through a fleetenv.Shared),
//     started by the first test that asks for it, so the package's pure
//     tests never wait for a hub, under -short or not.
//     Suites under test/ whose every test needs a whole fleet (e2e, pull,
//     browser, capacity, install) return from TestMain under -short.

// ErrShort is Start's refusal under -short.
var ErrShort = errors.New("testenv.Start under -short: the unit tier starts no API server; call testenv.Heavy(t) first so the test is skipped there")

// short reports whether this is a test binary run with -short. Outside a
// test binary, or before its flags are parsed (testing.Short panics
// then), it is not.
func short() bool {
	return testing.Testing() && flag.Parsed() && testing.Short()
}

// Heavy skips the test under -short: it starts an API server.
func Heavy(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an API server (etcd and kube-apiserver): not in the -short unit tier")
	}
}

// Shared is the hub a test package's heavy tests share. It starts when a
// test first calls Hub, and Main stops it after the tests.
type Shared struct {
	// Prefix names the hub's temporary data directory.
	Prefix string
	// Before, if set, runs once on the started hub (e.g. to start
	// controllers or create a fleet); its cleanup runs before the hub stops.
	Before func(*Hub) (cleanup func(), err error)

	once    sync.Once
	hub     *Hub
	err     error
	dir     string
	cleanup func()
}

// Hub returns the package's hub, starting it (and running Before) on the
// first call. It skips the test under -short and fails it when the hub
// could not start.
func (s *Shared) Hub(t testing.TB) *Hub {
	t.Helper()
	Heavy(t)
	s.once.Do(s.start)
	if s.err != nil {
		t.Fatalf("the package's hub: %v", s.err)
	}
	return s.hub
}

func (s *Shared) start() {
	if s.dir, s.err = os.MkdirTemp("", s.Prefix); s.err != nil {
		return
	}
	if s.hub, s.err = Start(s.dir); s.err != nil {
		s.err = fmt.Errorf("starting the hub: %w", s.err)
		s.hub = nil
		return
	}
	if s.Before != nil {
		s.cleanup, s.err = s.Before(s.hub)
	}
}

// Main runs the package's tests and then stops the hub if a test started
// it. It returns the exit code for os.Exit.
func (s *Shared) Main(m *testing.M) int {
	code := m.Run()
	if s.cleanup != nil {
		s.cleanup()
	}
	if s.hub != nil {
		if err := s.hub.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the hub:", err)
		}
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
	return code
}
