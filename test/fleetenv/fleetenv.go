// Package fleetenv starts a local fleet (the embedded hub, simulated
// members, the controllers) with clients, for the end-to-end suites'
// TestMain. It is apart from package testenv, which tests of the packages
// the fleet is built from import.
package fleetenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
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
	// klog and controller-runtime's root logger (which in-process agents
	// and client-go reach through their contexts) both write to the
	// suite's log; controller-runtime's informational messages only at -v
	// 1 and above, as the commands do.
	logging.Route(log, 1)
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

// ApplyYAML server-side applies a YAML stream with c as fieldManager,
// failing the test on the first error.
func ApplyYAML(t testing.TB, c client.Client, fieldManager, yaml string) {
	t.Helper()
	objs, err := testenv.DecodeYAML([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// CreateNamespace creates namespace name unless it exists.
func CreateNamespace(t testing.TB, c client.Client, name string) {
	t.Helper()
	err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// WaitTimeout bounds every wait of the end-to-end suites: generous, since
// a fleet shares two cores with the other test packages. Waits return as
// soon as they succeed.
const WaitTimeout = 3 * time.Minute

// Eventually polls check until it returns nil, failing the test with its
// last error after WaitTimeout.
func Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, WaitTimeout, what, check)
}

// ActiveTargets are a binding's targets but those being removed (state
// Unscheduled): cluster -> replicas.
func ActiveTargets(clusters []workv1alpha1.TargetCluster) map[string]int32 {
	out := map[string]int32{}
	for _, t := range clusters {
		if t.State != workv1alpha1.TargetUnscheduled {
			out[t.Name] = t.Replicas
		}
	}
	return out
}
