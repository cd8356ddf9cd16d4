package binding_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/binding"
	"github.com/shepherd-io/shepherd/pkg/controllers/detector"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The integration tests run the detector, the scheduler and the binding
// controller in one manager against a real embedded hub, shared by the
// package's tests. Each test works in its own namespace; the fleet
// (clusters) is shared and tests pick their clusters by name.
var (
	hub *testenv.Hub
	// cli talks to the API server directly (no cache), so what a test
	// reads is what the server holds.
	cli client.WithWatch
)

// fleet are the member clusters every test may place on.
var fleet = []string{"c1", "c2", "c3"}

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub, the controllers and the fleet for the first test
// that needs them (suite.Hub(t)); the package's pure tests never wait for it.
var suite = testenv.Shared{
	Prefix: "shepherd-binding-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		var err error
		if cli, err = client.NewWithWatch(h.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, err
		}
		if err := startControllers(); err != nil {
			return nil, err
		}
		stop := func() {
			if err := mgr.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}
		if err := createFleet(context.Background()); err != nil {
			return stop, fmt.Errorf("creating the fleet: %w", err)
		}
		return stop, nil
	},
}

// mgr runs the controllers; restartControllers replaces it.
var mgr *testenv.Manager

// kinds is the controllers' one interpreter, as the controller manager
// gives its controllers one: what a test teaches it (a customization),
// all of them know.
var kinds = interpreter.New()

// startControllers starts the three controllers, wired the way the
// controller manager wires them.
func startControllers() error {
	var err error
	mgr, err = hub.StartManager(func(mgr ctrl.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Interpreter: kinds}.WithDefaults()
		if err := detector.Setup(d, detector.Options{UnknownKindRetry: time.Second}); err != nil {
			return err
		}
		if err := scheduling.Setup(d, scheduling.Options{RetryBaseDelay: 200 * time.Millisecond, RetryMaxDelay: 2 * time.Second}); err != nil {
			return err
		}
		return binding.Setup(d, binding.Options{})
	})
	if err != nil {
		return fmt.Errorf("starting the controllers: %w", err)
	}
	return nil
}

// restartControllers stops the controllers and starts new ones, which
// know only what the API holds.
func restartControllers(t *testing.T) {
	t.Helper()
	if err := mgr.Stop(); err != nil {
		t.Fatalf("stopping the controllers: %v", err)
	}
	if err := startControllers(); err != nil {
		t.Fatal(err)
	}
}

// createFleet registers the shared clusters.
func createFleet(ctx context.Context) error {
	var errs []error
	for _, name := range fleet {
		errs = append(errs, createCluster(ctx, name, nil))
	}
	return errors.Join(errs...)
}

// createCluster registers a ready cluster (testenv.CreateReadyCluster).
func createCluster(ctx context.Context, name string, labels map[string]string) error {
	return testenv.CreateReadyCluster(ctx, cli, name, labels)
}
