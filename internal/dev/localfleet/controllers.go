package localfleet

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/controllermanager"
)

// The controller manager runs in this process beside the hub. It can be
// stopped and started again (StopControllers, StartControllers) while
// everything else keeps running, as when its pod restarts: a benchmark
// times how long a new one takes to catch up with what the hub holds.

// runningControllers is one run of the controller manager.
type runningControllers struct {
	cancel context.CancelFunc
	// done is closed once the manager has stopped; err is what its Start
	// returned.
	done chan struct{}
	err  error
	// stopped: StopControllers ended it, so its end is not the fleet's.
	stopped atomic.Bool
}

// controllersShutdownTimeout bounds how long the controllers may take to
// stop, so the whole fleet stops within `shepherd up`'s five seconds.
const controllersShutdownTimeout = 2 * time.Second

// ControllersConfig is a copy of the configuration the controller manager
// talks to the hub with (its ServiceAccount's token); nil without
// controllers.
func (f *Fleet) ControllersConfig() *rest.Config {
	if f.controllersCfg == nil {
		return nil
	}
	return rest.CopyConfig(f.controllersCfg)
}

// startControllers starts a controller manager with f.ctrlOpts under
// f.ctrlCtx. One that stops when StopControllers did not stop it sends
// why on f.controllersLost, and supervise then stops the fleet.
func (f *Fleet) startControllers() error {
	opts := f.ctrlOpts
	if opts.GracefulShutdownTimeout == 0 {
		opts.GracefulShutdownTimeout = controllersShutdownTimeout
	}
	// Tests and benchmarks start fleets (and managers) one after another
	// in one process.
	opts.SkipNameValidation = true
	mgr, err := controllermanager.New(f.controllersCfg, opts)
	if err != nil {
		return err
	}
	rc := &runningControllers{done: make(chan struct{})}
	labelled(f.ctrlCtx, "controllers", func(ctx context.Context) {
		ctx, rc.cancel = context.WithCancel(ctx)
		f.mu.Lock()
		f.controllers = rc
		f.mu.Unlock()
		go func() {
			rc.err = mgr.Start(logr.NewContext(ctx, f.ctrlLog.WithName("controllers")))
			close(rc.done)
			if rc.stopped.Load() {
				return
			}
			select {
			case f.controllersLost <- rc.err:
			default: // supervise already knows one stopped
			}
		}()
	})
	return nil
}

// StopControllers stops the controller manager and waits until it has
// stopped (its graceful shutdown takes at most controllersShutdownTimeout).
// The hub, the members and the agents keep running.
func (f *Fleet) StopControllers() error {
	f.mu.Lock()
	rc := f.controllers
	f.controllers = nil
	f.mu.Unlock()
	if rc == nil {
		return errors.New("no controller manager runs in the fleet")
	}
	rc.stopped.Store(true)
	rc.cancel()
	<-rc.done
	if rc.err != nil && !errors.Is(rc.err, context.Canceled) {
		return fmt.Errorf("the controller manager stopped with an error: %w", rc.err)
	}
	return nil
}

// StartControllers starts a new controller manager after StopControllers,
// with the options and credentials the fleet started with: its caches and
// work queues start empty and it lists everything again, as one in a new
// pod does.
func (f *Fleet) StartControllers() error {
	if f.controllersCfg == nil {
		return errors.New("the fleet was started without controllers")
	}
	f.mu.Lock()
	running := f.controllers != nil
	f.mu.Unlock()
	if running {
		return errors.New("the controller manager is running: stop it first")
	}
	return f.startControllers()
}

// waitControllers waits until the running controller manager, if any, has
// stopped, and returns what its Start returned.
func (f *Fleet) waitControllers() error {
	f.mu.Lock()
	rc := f.controllers
	f.mu.Unlock()
	if rc == nil {
		return nil
	}
	<-rc.done
	return rc.err
}
