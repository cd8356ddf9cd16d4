package failover_test

import (
	"context"
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
	"github.com/shepherd-io/shepherd/pkg/controllers/failover"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The integration tests run the failover and binding controllers against a
// real embedded hub, without members: a test writes the bindings' targets
// and aggregated status itself, standing in for the scheduler and the work
// status controller, and watches what failover does with them.
var (
	hub *testenv.Hub
	cli client.Client
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "shepherd-failover-")
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
	return m.Run()
}

// startManager runs the failover and binding controllers until the
// returned stop function is called; tests that restart the controllers
// call it several times (hence SkipNameValidation).
func startManager(t *testing.T) (stop func()) {
	t.Helper()
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
		t.Fatal(err)
	}
	if err := failover.Setup(mgr, failover.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := binding.Setup(mgr, binding.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}
