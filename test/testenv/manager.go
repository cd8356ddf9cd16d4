package testenv

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Manager is a controller manager running controllers under test.
type Manager struct {
	cancel context.CancelFunc
	done   chan error
}

// StartManager runs a controller-runtime manager on the hub with the
// controllers setup registers, set up for tests: no metrics or probe
// endpoints, no leader election, panics failing the test binary rather
// than being logged, and controller names not validated, so a test can
// stop the controllers and start them again in the same process. Its logs
// go to stderr.
func (h *Hub) StartManager(setup func(ctrl.Manager) error) (*Manager, error) {
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(h.Config, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{RecoverPanic: ptr.To(false), SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m, nil
}

// Stop stops the manager and waits for it; it returns the manager's error.
func (m *Manager) Stop() error {
	m.cancel()
	return <-m.done
}
