package localfleet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/shepherd-io/shepherd/internal/dev/controlplane"
)

// startHub starts the hub's control plane with f.hubOpts under
// f.hubCtx and watches it: a hub that stops when RestartHub did not stop
// it closes f.hubLost, and supervise then stops the fleet.
func (f *Fleet) startHub() error {
	var cp *controlplane.ControlPlane
	var err error
	labelled(f.hubCtx, "hub", func(ctx context.Context) { cp, err = controlplane.Start(ctx, f.hubOpts) })
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.Hub = cp
	f.mu.Unlock()
	go func() {
		<-cp.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.Hub == cp && !f.hubRestarting {
			f.loseHub()
		}
	}()
	return nil
}

// loseHub closes f.hubLost once; f.mu is held.
func (f *Fleet) loseHub() {
	select {
	case <-f.hubLost:
	default:
		close(f.hubLost)
	}
}

// hub is the running hub's control plane (the one RestartHub started
// last).
func (f *Fleet) hub() *controlplane.ControlPlane {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Hub
}

// RestartHub stops the hub's API server and etcd, leaves it down for down,
// and starts it again on the same data directory and port, as a restart
// of the hub's control plane does: every stored object stays, every
// request and watch open meanwhile fails, and clients find the hub again
// at the same address with the same certificates. Everything else in the
// fleet (members, agents, controllers) keeps running and has to cope.
// f.Hub is the new control plane afterwards. A hub that cannot start
// again stops the fleet, with the error.
func (f *Fleet) RestartHub(down time.Duration) error {
	f.mu.Lock()
	if f.hubRestarting {
		f.mu.Unlock()
		return errors.New("the hub is already restarting")
	}
	f.hubRestarting = true
	old := f.Hub
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.hubRestarting = false
		f.mu.Unlock()
	}()
	u, err := url.Parse(old.URL())
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("the hub's port in %s: %w", old.URL(), err)
	}
	if err := old.Stop(); err != nil {
		return fmt.Errorf("stopping the hub: %w", err)
	}
	time.Sleep(down)
	f.hubOpts.APIServerPort = port
	if err := f.startHub(); err != nil {
		err = fmt.Errorf("starting the hub again: %w", err)
		f.setErr(err)
		f.mu.Lock()
		f.loseHub()
		f.mu.Unlock()
		return err
	}
	return nil
}
