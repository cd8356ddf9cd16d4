package reschedule_test

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
	"github.com/shepherd-io/shepherd/pkg/controllers/reschedule"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The integration tests run the detector, the scheduler, the binding
// controller and the RescheduleTask controller in one manager against a
// real embedded hub, with Cluster objects standing for members (no
// execution controller: Works are written, never applied). Each test works
// in its own namespace; tests that change clusters create their own.
var (
	hub *testenv.Hub
	// cli talks to the API server directly (no cache).
	cli client.Client
	// controllers is the running manager; TestRestartMovesNothing
	// replaces it.
	controllers *testenv.Manager
)

// fleet are the clusters every test may place on and none changes.
var fleet = []string{"c1", "c2", "c3"}

func TestMain(m *testing.M) { os.Exit(suite.Main(m)) }

// suite starts the hub, the controllers and the fleet for the first test
// that needs them (suite.Hub(t)); the package's pure tests never wait for it.
var suite = testenv.Shared{
	Prefix: "shepherd-reschedule-",
	Before: func(h *testenv.Hub) (func(), error) {
		hub = h
		var err error
		if cli, err = client.New(h.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
			return nil, err
		}
		if controllers, err = startManager(); err != nil {
			return nil, fmt.Errorf("starting the controllers: %w", err)
		}
		stop := func() {
			if err := controllers.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}
		var errs []error
		for _, name := range fleet {
			errs = append(errs, createCluster(context.Background(), name, nil))
		}
		if err := errors.Join(errs...); err != nil {
			return stop, fmt.Errorf("creating the fleet: %w", err)
		}
		return stop, nil
	},
}

// startManager runs the detector, scheduling, binding and RescheduleTask
// controllers the way the controller manager wires them.
func startManager() (*testenv.Manager, error) {
	return hub.StartManager(func(mgr ctrl.Manager) error {
		setups := []func() error{
			func() error {
				return detector.Setup(controllerdeps.Deps{Manager: mgr}, detector.Options{UnknownKindRetry: time.Second})
			},
			func() error {
				return scheduling.Setup(controllerdeps.Deps{Manager: mgr}, scheduling.Options{RetryBaseDelay: 200 * time.Millisecond, RetryMaxDelay: 2 * time.Second})
			},
			func() error { return binding.Setup(controllerdeps.Deps{Manager: mgr}, binding.Options{}) },
			func() error { return reschedule.Setup(controllerdeps.Deps{Manager: mgr}, reschedule.Options{}) },
		}
		for _, setup := range setups {
			if err := setup(); err != nil {
				return err
			}
		}
		return nil
	})
}
