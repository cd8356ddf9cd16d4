package binding_test

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
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
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

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "shepherd-binding-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	start := time.Now()
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
	fmt.Fprintf(os.Stderr, "hub started in %s\n", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped, err := startControllers(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the controllers:", err)
		return 1
	}
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if err := createFleet(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "creating the fleet:", err)
		return 1
	}
	return m.Run()
}

// startControllers runs the three controllers the way `shepherd up` wires
// them, and returns a channel that yields the manager's result.
func startControllers(ctx context.Context) (<-chan error, error) {
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(hub.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		// A panic in a controller fails the tests instead of being logged.
		Controller: config.Controller{RecoverPanic: ptr.To(false)},
	})
	if err != nil {
		return nil, err
	}
	if err := detector.Setup(mgr, detector.Options{UnknownKindRetry: time.Second}); err != nil {
		return nil, err
	}
	if err := scheduling.Setup(mgr, scheduling.Options{RetryBaseDelay: 200 * time.Millisecond, RetryMaxDelay: 2 * time.Second}); err != nil {
		return nil, err
	}
	if err := binding.Setup(mgr, binding.Options{}); err != nil {
		return nil, err
	}
	cli, err = client.NewWithWatch(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
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
