// Package integration runs Shepherd's API against a real embedded hub: every
// example applies, and bad objects are refused with a message naming the field.
package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/shepherd-io/shepherd/test/testenv"
)

// hub is shared by the package's tests: starting one takes a few seconds.
var hub *testenv.Hub

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "shepherd-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	hub, err = testenv.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the hub:", err)
		return 1
	}
	defer func() {
		if err := hub.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the hub:", err)
		}
	}()
	return m.Run()
}
