// Package integration runs Shepherd's API against a real embedded hub: every
// example applies, and bad objects are refused with a message naming the field.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	healthcel "github.com/shepherd-io/shepherd/pkg/health/cel"
	"github.com/shepherd-io/shepherd/pkg/scheme"
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
	// The HealthInterpreter webhook, as the controller manager serves it:
	// part of the API that these tests check.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	webhook, err := healthcel.ServeWebhook(ctx, c, healthcel.WebhookOptions{URLConfiguration: true}, logr.Discard())
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the HealthInterpreter webhook:", err)
		return 1
	}
	defer func() { _ = webhook.Stop() }()
	return m.Run()
}
