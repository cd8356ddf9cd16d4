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

	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// hub is shared by the package's tests: starting one takes a few seconds.
var hub *testenv.Hub

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub for the first test (suite.Hub(t)); none runs under
// -short.
var suite = testenv.Shared{
	Prefix: "shepherd-integration-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		// The hub's validating webhooks, as the controller manager serves
		// them: part of the API that these tests check.
		c, err := client.New(h.Config, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return nil, err
		}
		webhook, err := admission.ServeWebhook(context.Background(), c, admission.WebhookOptions{URLConfiguration: true}, logr.Discard())
		if err != nil {
			return nil, fmt.Errorf("starting the hub's validating webhooks: %w", err)
		}
		return func() { _ = webhook.Stop() }, nil
	},
}
