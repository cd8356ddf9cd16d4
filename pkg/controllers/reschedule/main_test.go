package reschedule_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

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
	controllers *manager
)

// fleet are the clusters every test may place on and none changes.
var fleet = []string{"c1", "c2", "c3"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "shepherd-reschedule-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if hub, err = testenv.Start(dir); err != nil {
		fmt.Fprintln(os.Stderr, "starting the hub:", err)
		return 1
	}
	defer func() {
		if err := hub.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the hub:", err)
		}
	}()
	if cli, err = client.New(hub.Config, client.Options{Scheme: scheme.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if controllers, err = startManager(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the controllers:", err)
		return 1
	}
	defer func() {
		if err := controllers.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	var errs []error
	for _, name := range fleet {
		errs = append(errs, createCluster(context.Background(), name, nil))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "creating the fleet:", err)
		return 1
	}
	return m.Run()
}

// manager is a running controller manager.
type manager struct {
	cancel context.CancelFunc
	done   chan error
}

// startManager runs the detector, scheduling, binding and RescheduleTask
// controllers the way the controller manager wires them. Controller names
// are not validated, so a test can start a second manager after stopping
// the first in the same process.
func startManager() (*manager, error) {
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(hub.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{RecoverPanic: ptr.To(false), SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	setups := []func() error{
		func() error { return detector.Setup(mgr, detector.Options{UnknownKindRetry: time.Second}) },
		func() error {
			return scheduling.Setup(mgr, scheduling.Options{RetryBaseDelay: 200 * time.Millisecond, RetryMaxDelay: 2 * time.Second})
		},
		func() error { return binding.Setup(mgr, binding.Options{}) },
		func() error { return reschedule.Setup(mgr, reschedule.Options{}) },
	}
	for _, setup := range setups {
		if err := setup(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &manager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m, nil
}

// stop stops the manager and waits for it.
func (m *manager) stop() error {
	m.cancel()
	return <-m.done
}
