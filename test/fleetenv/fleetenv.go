// Package fleetenv starts a local fleet (the embedded hub, simulated
// members, the controllers) with clients, for the end-to-end suites'
// TestMain. It is apart from package testenv, which tests of the packages
// the fleet is built from import.
package fleetenv

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/controlplane"
	"github.com/shepherd-io/shepherd/pkg/localfleet"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// FleetEnv is a local fleet (the embedded hub, simulated members, and the
// controllers unless the options say otherwise) with clients, started once
// by an end-to-end suite's TestMain.
type FleetEnv struct {
	Fleet *localfleet.Fleet
	// Hub is a client of the hub as its administrator.
	Hub client.Client
	// Members are clients of each member, by name.
	Members map[string]client.Client
	// DataDir holds the fleet; Stop removes it.
	DataDir string
	// Log writes to stderr; the suite's klog output goes there too.
	Log logr.Logger
}

// StartFleet starts a fleet in a new temporary directory; the suite's name
// prefixes it. opts.DataDir and opts.Logger are set here.
func StartFleet(suite string, opts localfleet.Options) (*FleetEnv, error) {
	dir, err := os.MkdirTemp("", "shepherd-"+suite+"-")
	if err != nil {
		return nil, err
	}
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	controlplane.RedirectKlog(log.WithName("k8s"))
	opts.DataDir, opts.Logger = dir, log
	started := time.Now()
	f, err := localfleet.Start(context.Background(), opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the fleet: %w", err)
	}
	fmt.Printf("hub and %d members started in %s\n", len(f.Members), time.Since(started).Round(time.Millisecond))
	env := &FleetEnv{Fleet: f, DataDir: dir, Log: log, Members: map[string]client.Client{}}
	if env.Hub, err = NewClient(f.Hub.RestConfig()); err != nil {
		env.Stop()
		return nil, err
	}
	for _, m := range f.Members {
		if env.Members[m.Name()], err = NewClient(m.RestConfig()); err != nil {
			env.Stop()
			return nil, err
		}
	}
	return env, nil
}

// Stop stops the fleet and removes its directory.
func (e *FleetEnv) Stop() {
	if err := e.Fleet.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the fleet:", err)
	}
	os.RemoveAll(e.DataDir)
}

// NewClient is a client with Shepherd's scheme and a rate limit that does
// not slow a test down.
func NewClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
