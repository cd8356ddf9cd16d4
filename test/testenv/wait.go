package testenv

import (
	"testing"
	"time"
)

// slowWait is the wait from which Eventually logs how long it took.
const slowWait = 3 * time.Second

// Eventually polls check every 50 ms until it returns nil, failing the test
// with its last error after timeout. Waits end as soon as they succeed, so a
// generous timeout costs nothing on a fast machine.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	started := time.Now()
	deadline := started.Add(timeout)
	for {
		err := check()
		if err == nil {
			// A long wait is named in -v output: where a suite's time goes.
			if took := time.Since(started); took >= slowWait {
				t.Logf("%s: true after %s", what, took.Round(100*time.Millisecond))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
