package fleetbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Two peers published how their hubs fare at scale; `shepherd bench
// peers` runs the same scenarios on Shepherd, over simulated Pull clusters
// (simulated.go), in one process:
//
//   - kubefleet (peers_kubefleet.go), after KubeFleet's performance and
//     scalability report of Q1 2026: 1,000 member clusters, 1,000
//     placements each picking 100 of them by label and carrying a
//     namespace, a 1 KB ConfigMap and a Deployment of 0 replicas, 100
//     concurrent three-stage rollouts, then a restart of the controllers;
//   - karmada-startup (peers_karmada.go), after Karmada v1.17's controller
//     start-up: 30,000 workloads, each with a ConfigMap it depends on, and
//     how long a restarted controller manager takes to catch up
//     (catchup.go).

// Defaults of the scenarios: the peers' sizes. Neither fits a small
// machine in one process (see the memory notes of `shepherd bench peers`).
const (
	DefaultKubeFleetClusters             = 1000
	DefaultKubeFleetPlacements           = 1000
	DefaultKubeFleetClustersPerPlacement = 100
	DefaultKubeFleetRollouts             = 100
	DefaultKarmadaWorkloads              = 30000
	DefaultKarmadaClusters               = 2
	// DefaultPeersQuiet is the quiet window of catching up: longer than
	// the controllers' coalescing windows (a second), so that a write they
	// hold back still falls inside it.
	DefaultPeersQuiet = 5 * time.Second
	// DefaultPeersTimeout bounds each wait: at the peers' sizes placing
	// alone takes hours on a small machine (20 to 45 Works a second).
	DefaultPeersTimeout = 4 * time.Hour
)

// KubeFleetOptions size the kubefleet scenario.
type KubeFleetOptions struct {
	// Clusters are simulated Pull clusters, in groups of
	// ClustersPerPlacement taken in order of their names; the clusters
	// left over (Clusters mod ClustersPerPlacement) are in no group.
	Clusters int
	// Placements each pick a group, the groups in turn.
	Placements           int
	ClustersPerPlacement int
	// Rollouts are the placements whose image changes at once.
	Rollouts int
	// Quiet is the quiet window of catching up (catchup.go).
	Quiet time.Duration
	// Timeout bounds each wait: every placement done, each rollout, the
	// catch-up.
	Timeout time.Duration
	Logger  logr.Logger
}

// Validate refuses a size that makes no sense, naming the flag of
// `shepherd bench peers` that sets it.
func (o KubeFleetOptions) Validate() error {
	var errs []error
	if o.Clusters < 1 {
		errs = append(errs, fmt.Errorf("--clusters %d: at least 1", o.Clusters))
	}
	if o.Placements < 1 {
		errs = append(errs, fmt.Errorf("--placements %d: at least 1", o.Placements))
	}
	if o.ClustersPerPlacement < 1 || (o.Clusters >= 1 && o.ClustersPerPlacement > o.Clusters) {
		errs = append(errs, fmt.Errorf("--clusters-per-placement %d: at least 1 and at most --clusters (%d)", o.ClustersPerPlacement, o.Clusters))
	}
	if o.Rollouts < 1 || (o.Placements >= 1 && o.Rollouts > o.Placements) {
		errs = append(errs, fmt.Errorf("--rollouts %d: at least 1 and at most --placements (%d): each rollout changes one placement's Deployment", o.Rollouts, o.Placements))
	}
	return errors.Join(append(errs, checkWaits(o.Quiet, o.Timeout)...)...)
}

// KarmadaStartupOptions size the karmada-startup scenario.
type KarmadaStartupOptions struct {
	// Workloads are Deployments, each mounting a ConfigMap of its own,
	// on every one of Clusters simulated Pull clusters.
	Workloads, Clusters int
	// Quiet and Timeout are as KubeFleetOptions'.
	Quiet, Timeout time.Duration
	Logger         logr.Logger
}

// Validate refuses a size that makes no sense, naming the flag.
func (o KarmadaStartupOptions) Validate() error {
	var errs []error
	if o.Workloads < 1 {
		errs = append(errs, fmt.Errorf("--workloads %d: at least 1", o.Workloads))
	}
	if o.Clusters < 1 {
		errs = append(errs, fmt.Errorf("--clusters %d: at least 1", o.Clusters))
	}
	return errors.Join(append(errs, checkWaits(o.Quiet, o.Timeout)...)...)
}

// checkWaits refuses a quiet window or a timeout that cannot be waited.
func checkWaits(quiet, timeout time.Duration) []error {
	var errs []error
	if quiet <= 0 {
		errs = append(errs, fmt.Errorf("--quiet %s: must be positive", quiet))
	}
	if timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", timeout))
	} else if quiet >= timeout {
		errs = append(errs, fmt.Errorf("--quiet %s: must be shorter than --timeout (%s), which bounds the catch-up and its quiet window", quiet, timeout))
	}
	return errs
}

// onOwnFleet starts a fleet of the hub and the controllers alone, in a
// temporary directory, runs fn on it (its templates in namespace ns) and
// stops it.
func onOwnFleet[R any](ctx context.Context, log logr.Logger, ns string, fn func(context.Context, on) (R, error)) (R, error) {
	var zero R
	dir, err := os.MkdirTemp("", "shepherd-bench-"+ns+"-")
	if err != nil {
		return zero, err
	}
	defer os.RemoveAll(dir)
	f, err := localfleet.Start(ctx, localfleet.Options{DataDir: dir, Logger: log})
	if err != nil {
		return zero, err
	}
	defer func() { _ = f.Stop() }()
	// The run's simulator and watches stop before the fleet does: a
	// simulated agent renewing its Lease on a stopped hub only logs
	// errors.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	return fn(runCtx, on{fleet: f, ns: ns, simPrefix: simPrefix})
}

// registerSimulated registers n simulated Pull clusters with sim on the
// fleet of where (named by its prefix), and returns the hub's admin
// configuration, at the rate a benchmark's creators need, and a client.
func registerSimulated(ctx context.Context, where on, n int, sim simOptions, log logr.Logger) (*rest.Config, client.Client, error) {
	admin := where.fleet.Hub.RestConfig()
	admin.QPS, admin.Burst = 1000, 2000
	log.Info("registering the simulated clusters", "clusters", n)
	sim.prefix = where.simPrefix
	if _, err := startSimulatedWith(ctx, admin, n, sim, log.WithName("simulated-agents")); err != nil {
		return nil, nil, err
	}
	hub, err := client.New(admin, client.Options{Scheme: scheme.Scheme})
	return admin, hub, err
}

// peerRun is what a peer scenario runs with: the hub's admin
// configuration, a client of it, and the watch of its placements.
type peerRun struct {
	admin *rest.Config
	hub   client.Client
	pl    *placements
}

// startPeer registers n simulated clusters labelled by labels, each with
// room for replicas of the benchmarks' replicas at least, and starts
// watching the placements; it returns how long registering took. The
// agents' Leases are the rollout benchmark's, long: heartbeats are not
// what the scenarios measure, and a cluster that misses one while the hub
// is busy would leave its placements.
func startPeer(ctx context.Context, where on, n, replicas int, labels func(int) map[string]string, log logr.Logger) (peerRun, float64, error) {
	registering := time.Now()
	sim := simOptions{labels: labels, leaseDuration: rolloutLeaseDuration, renewPeriod: rolloutLeaseRenewPeriod, replicas: replicas}
	admin, hub, err := registerSimulated(ctx, where, n, sim, log)
	if err != nil {
		return peerRun{}, 0, err
	}
	took := time.Since(registering).Seconds()
	pl, err := watchPlacements(ctx, admin)
	return peerRun{admin: admin, hub: hub, pl: pl}, took, err
}

// Footprint is what the process and the hub's etcd hold once a scenario
// is placed: etcd's size (controlplane.StorageBytes), the process's
// memory and its live heap.
type Footprint struct {
	EtcdAllocatedBytes int64       `json:"etcdAllocatedBytes"`
	EtcdInUseBytes     int64       `json:"etcdInUseBytes"`
	Memory             MemoryStats `json:"memory"`
	Heap               LiveHeap    `json:"heap"`
}

func footprint(where on) (Footprint, error) {
	st := storageOf(where)
	fp := Footprint{EtcdAllocatedBytes: st.allocated, EtcdInUseBytes: st.inUse, Memory: memoryNow()}
	heap, err := liveHeap()
	fp.Heap = heap.report()
	return fp, err
}

// Restart is how both scenarios end: the controller manager's restart
// and catch-up, and the process's peak memory after it.
type Restart struct {
	CatchUp      *CatchUpReport `json:"catchUp"`
	PeakRSSBytes uint64         `json:"peakRSSBytes"`
}

func restart(ctx context.Context, where on, admin *rest.Config, pl *placements, quiet, timeout time.Duration, log logr.Logger) (Restart, error) {
	c, err := restartControllers(ctx, where.fleet, admin, pl, quiet, timeout, log)
	return Restart{CatchUp: c, PeakRSSBytes: memoryNow().PeakRSSBytes}, err
}

// storage reads the hub's etcd size (controlplane.StorageBytes).
type storage struct{ allocated, inUse int64 }

func storageOf(where on) storage {
	a, u := where.fleet.Hub.StorageBytes()
	return storage{allocated: a, inUse: u}
}

// per divides the growth from s0 to s among n.
func (s storage) per(s0 storage, n int) (allocated, inUse float64) {
	d := float64(max(n, 1))
	return float64(s.allocated-s0.allocated) / d, float64(s.inUse-s0.inUse) / d
}

// peerImage is the image of revision r of the scenarios' Deployments.
func peerImage(r int) string { return fmt.Sprintf("example.com/web:v%d", r) }

// durationStats are the nearest-rank p50 and p90 and the largest of ds,
// in seconds; ds is sorted in place.
func durationStats(ds []time.Duration) (p50, p90, maxSeconds float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return percentile(ds, 50).Seconds(), percentile(ds, 90).Seconds(), ds[len(ds)-1].Seconds()
}
