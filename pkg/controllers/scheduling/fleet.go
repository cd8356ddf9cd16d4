package scheduling

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Fleet caches the scheduler's snapshot of the clusters. Building one
// indexes every cluster, so it is built once per fleet state, not per
// binding: every cluster event bumps a generation, and the next binding
// scheduled after it rebuilds the snapshot from the informer cache. One
// Fleet is shared by the reconcilers of both binding kinds.
type Fleet struct {
	reader client.Reader
	gen    atomic.Uint64
	// ledger holds the replicas in flight (inflight.go); Snapshot takes
	// them out of the clusters' room.
	ledger *ledger

	mu      sync.Mutex
	snap    *framework.Snapshot
	snapGen uint64
	// withFlight is snap with the ledger's reservations at ledgerVersion.
	withFlight    *framework.Snapshot
	ledgerVersion uint64
}

// NewFleet returns a Fleet listing clusters with reader (the manager's
// cached client); kinds (the process's interpreter) reads the replicas the
// members report, for the replicas in flight.
func NewFleet(reader client.Reader, kinds interpreter.Interpreter) *Fleet {
	f := &Fleet{reader: reader, ledger: newLedger(kinds)}
	f.gen.Store(1) // so that the zero snapGen is stale
	return f
}

// Invalidate marks the snapshot stale.
func (f *Fleet) Invalidate() { f.gen.Add(1) }

// Snapshot returns the snapshot of the current fleet with the replicas in
// flight taken out of the clusters' room, rebuilding it when a cluster
// changed since it was built (and taking the replicas out again when the
// ledger changed). Snapshots are immutable and shared by concurrent
// scheduling cycles.
func (f *Fleet) Snapshot(ctx context.Context) (*framework.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.rebuild(ctx); err != nil {
		return nil, err
	}
	if f.withFlight == nil || f.ledgerVersion != f.ledger.currentVersion() {
		rs, version := f.ledger.reservations(f.snap)
		f.withFlight, f.ledgerVersion = f.snap.WithReservations(rs), version
		replicasInFlight.Set(float64(countReplicas(rs)))
	}
	return f.withFlight, nil
}

// Clusters returns the snapshot of the current fleet without the replicas
// in flight: what deciding whether a binding needs a cycle reads (its
// clusters, not their room).
func (f *Fleet) Clusters(ctx context.Context) (*framework.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.rebuild(ctx); err != nil {
		return nil, err
	}
	return f.snap, nil
}

// rebuild builds the snapshot again when a cluster changed since it was
// built; f.mu is held.
func (f *Fleet) rebuild(ctx context.Context) error {
	gen := f.gen.Load()
	if f.snap != nil && f.snapGen == gen {
		return nil
	}
	list := &clusterv1alpha1.ClusterList{}
	if err := f.reader.List(ctx, list); err != nil {
		return err
	}
	snap, err := framework.SnapshotFromClusters(list.Items)
	if err != nil {
		return err
	}
	snapshotBuilds.Inc()
	f.snap, f.snapGen, f.withFlight = snap, gen, nil
	return nil
}

func countReplicas(rs map[string][]framework.Reservation) int64 {
	var n int64
	for _, l := range rs {
		for _, r := range l {
			n += r.Replicas
		}
	}
	return n
}

// clusterChange classifies a cluster event by the bindings it may concern.
type clusterChange uint8

const (
	// changeEligibility: the cluster may have become eligible for
	// placements (it appeared, or its labels, spec or APIs changed).
	changeEligibility clusterChange = 1 << iota
	// changeGone: the cluster left the fleet or is leaving it.
	changeGone
	// changeCapacity: its allocatable resources changed.
	changeCapacity
)

// classify says what an update of a cluster changed for scheduling. The
// Ready condition is not looked at: a selected cluster turning NotReady
// is failover's business, and the taints the cluster status controller
// sets for it are spec changes. Usage (allocated, allocating) changes with
// every probe and is not looked at either.
func classify(old, new *clusterv1alpha1.Cluster) clusterChange {
	var c clusterChange
	if old.DeletionTimestamp == nil && new.DeletionTimestamp != nil {
		c |= changeGone
	}
	if old.Generation != new.Generation || !maps.Equal(old.Labels, new.Labels) ||
		!equality.Semantic.DeepEqual(old.Status.APIEnablements, new.Status.APIEnablements) {
		c |= changeEligibility
	}
	if !equality.Semantic.DeepEqual(allocatable(old), allocatable(new)) {
		c |= changeCapacity
	}
	return c
}

func allocatable(c *clusterv1alpha1.Cluster) corev1.ResourceList {
	if rs := c.Status.ResourceSummary; rs != nil {
		return rs.Allocatable
	}
	return nil
}
