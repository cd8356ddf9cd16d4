package testenv

import (
	"testing"
	"time"
)

// Eventually polls check every 50 ms until it returns nil, failing the test
// with its last error after timeout. Waits end as soon as they succeed, so a
// generous timeout costs nothing on a fast machine.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
