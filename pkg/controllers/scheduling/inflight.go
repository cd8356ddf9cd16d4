package scheduling

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Replicas in flight. A cluster's resource summary counts the pods its
// member runs; the replicas the scheduler has just assigned there are not
// pods yet. Without counting them, every workload of a burst sees the same
// free room and they all pile onto the same "best" cluster, to sit
// Pending. So each cycle sees the fleet with the replicas in flight taken
// out (framework.Snapshot.WithReservations).
//
// What is in flight is derived from state stored in the API, so that a
// restarted controller manager recomputes it: for every binding and every
// active target, the replicas assigned there less those the summary
// already counts (for a workload of several pod templates, each
// component's replicas there, with its own request). The summary counts the replicas the member reported for
// the workload (the copy's status replicas, as the process's interpreter
// reads them: StatusReplicas, status.replicas for Kubernetes' workloads and
// by convention) once the Cluster was probed after that report was seen
// (the binding's aggregatedStatus[].statusTime before the Cluster's
// lastProbeTime; both are stamped by the process that reports the
// cluster, the agent for a Pull one, so no two clocks are compared).
// Until then all of them are in flight: a report the summary may not
// include yet is not trusted, so room is never counted twice as free. A
// kind that reports no status replicas counts as included once such a
// later summary exists at all.
//
// The scheduler's own decisions are assumed at once, before they are
// written, under the same lock as the cycle that made them (ledger.lock),
// so the next cycle sees them; the binding's next event replaces the
// assumption with what the API holds.

// ledgerEntry is one binding's replicas on one cluster.
type ledgerEntry struct {
	cluster  string
	replicas int64
	request  framework.Resources
	// reported is the replicas the member's status reports for the copy,
	// -1 when its status has none; reportedAt is when the hub saw the
	// status change (zero: never).
	reported   int64
	reportedAt time.Time
}

// inFlight is how many of e's replicas the cluster's summary, written at
// probedAt, does not count yet.
func (e *ledgerEntry) inFlight(probedAt time.Time) int64 {
	counted := int64(0)
	if !e.reportedAt.IsZero() && e.reportedAt.Before(probedAt) {
		counted = e.replicas
		if e.reported >= 0 {
			counted = min(e.replicas, e.reported)
		}
	}
	return max(0, e.replicas-counted)
}

// entriesOf lists what b has assigned: one entry per active target with
// replicas, for workloads that request resources (others take no room).
// A workload made of several pod templates (spec.components) has one
// entry per component its target holds, each with that component's
// replicas and request: a gang placed on a cluster takes the room of all
// its parts, by the same rule as any replicas. kinds reads the replicas
// each copy's status reports.
func entriesOf(kinds interpreter.Interpreter, b workv1alpha1.BindingObject) []ledgerEntry {
	spec := b.GetBindingSpec()
	components := framework.ComponentsFromSpec(spec.Components)
	var req framework.Resources
	if spec.ReplicaRequirements != nil {
		req = framework.ResourcesFromList(spec.ReplicaRequirements.ResourceRequest)
	}
	if req.IsZero() && len(components) == 0 {
		return nil
	}
	items := b.GetBindingStatus().AggregatedStatus
	gk := schema.FromAPIVersionAndKind(spec.Resource.APIVersion, spec.Resource.Kind).GroupKind()
	var out []ledgerEntry
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		e := ledgerEntry{cluster: t.Name, reported: -1}
		if i := slices.IndexFunc(items, func(it workv1alpha1.AggregatedStatusItem) bool { return it.ClusterName == t.Name }); i >= 0 {
			it := &items[i]
			if it.StatusTime != nil {
				e.reportedAt = it.StatusTime.Time
			}
			if n, ok := kinds.StatusReplicas(gk, it.Status); ok {
				e.reported = int64(n)
			}
		}
		if t.Replicas > 0 && !req.IsZero() {
			e.replicas, e.request = int64(t.Replicas), req
			out = append(out, e)
		}
		for _, tc := range t.Components {
			k := slices.IndexFunc(components, func(c framework.Component) bool { return c.Name == tc.Name })
			if k < 0 || tc.Replicas <= 0 || components[k].Request.IsZero() {
				continue
			}
			// The copy's status replicas, if its kind reports any, count
			// the workload's pods, not one component's: none of them is
			// trusted for a component, whose replicas all count as in
			// flight until a summary later than the copy's status exists.
			c := e
			c.replicas, c.request, c.reported = int64(tc.Replicas), components[k].Request, -1
			out = append(out, c)
		}
	}
	return out
}

// ledger holds every binding's entries, keyed by binding
// ("<kind>/<namespace>/<name>").
type ledger struct {
	// kinds reads the replicas the members report (the process's
	// interpreter, so that a customized kind is read as taught).
	kinds interpreter.Interpreter

	// cycle is held by a scheduling cycle from reading the snapshot to
	// assuming its decision, so that no two cycles take the same room.
	cycle sync.Mutex

	mu      sync.Mutex
	version uint64
	entries map[string]ledgerRecord
}

type ledgerRecord struct {
	// resourceVersion of the binding the entries come from; an assumed
	// record ignores events of older versions.
	resourceVersion string
	assumed         bool
	entries         []ledgerEntry
	// targets are an assumed record's active target names, sorted: the
	// clusters workload affinity peers see before the write reaches the
	// cache (peers.go).
	targets []string
}

func newLedger(kinds interpreter.Interpreter) *ledger {
	return &ledger{kinds: kinds, entries: map[string]ledgerRecord{}}
}

// currentVersion changes whenever the ledger does.
func (l *ledger) currentVersion() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// ledgerKey names a binding of the kind named kind.
func ledgerKey(kind string, b workv1alpha1.BindingObject) string {
	return kind + "/" + b.GetNamespace() + "/" + b.GetName()
}

// observe records b as the API holds it, unless the scheduler assumed a
// placement for it that b does not show yet: an assumption stands until an
// event of a version newer than the one it was made on (or, once written,
// than the one its write produced). The cache is updated before event
// handlers run, so a cycle can read a version and assume before the
// handler sees that same version: it must not undo the assumption.
func (l *ledger) observe(key string, b workv1alpha1.BindingObject) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.entries[key]; ok && cur.assumed && !newerThan(b.GetResourceVersion(), cur.resourceVersion) {
		return
	}
	l.set(key, ledgerRecord{resourceVersion: b.GetResourceVersion(), entries: entriesOf(l.kinds, b)})
}

// assume records the targets a cycle decided for b (with b's request and
// reports), before they are written.
func (l *ledger) assume(key string, b workv1alpha1.BindingObject, targets []workv1alpha1.TargetCluster) {
	spec := *b.GetBindingSpec()
	spec.Clusters = targets
	withTargets := &workv1alpha1.ResourceBinding{Spec: spec, Status: *b.GetBindingStatus()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(key, ledgerRecord{resourceVersion: b.GetResourceVersion(), assumed: true, entries: entriesOf(l.kinds, withTargets), targets: activeNames(targets)})
}

// assumedTargets returns the targets assumed for the binding at key, when
// its decision is not in the cache yet.
func (l *ledger) assumedTargets(key string) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.entries[key]; ok && cur.assumed {
		return cur.targets, true
	}
	return nil, false
}

// written records the version a cycle's write produced: events of older
// versions no longer replace the assumption.
func (l *ledger) written(key, resourceVersion string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.entries[key]; ok && cur.assumed {
		cur.resourceVersion = resourceVersion
		l.entries[key] = cur
	}
}

// release replaces a failed assumption with b as it was read.
func (l *ledger) release(key string, b workv1alpha1.BindingObject) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(key, ledgerRecord{resourceVersion: b.GetResourceVersion(), entries: entriesOf(l.kinds, b)})
}

// forget drops a deleted binding.
func (l *ledger) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.entries[key]; ok {
		delete(l.entries, key)
		l.version++
	}
}

func (l *ledger) set(key string, r ledgerRecord) {
	if cur, ok := l.entries[key]; ok && !cur.assumed && !r.assumed && sameEntries(cur.entries, r.entries) {
		l.entries[key] = r
		return
	}
	if len(r.entries) == 0 && !r.assumed {
		if _, ok := l.entries[key]; !ok {
			return
		}
	}
	l.entries[key] = r
	l.version++
}

func sameEntries(a, b []ledgerEntry) bool {
	return slices.EqualFunc(a, b, func(x, y ledgerEntry) bool {
		return x.cluster == y.cluster && x.replicas == y.replicas && x.reported == y.reported && x.reportedAt.Equal(y.reportedAt) &&
			x.request.MilliCPU == y.request.MilliCPU && x.request.Memory == y.request.Memory && slices.Equal(x.request.Scalars, y.request.Scalars)
	})
}

// reservations are the replicas in flight per cluster, against the
// snapshot's clusters' probe times, in a deterministic order, and the
// ledger version they reflect.
func (l *ledger) reservations(snap *framework.Snapshot) (map[string][]framework.Reservation, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Map order does not reach the result: each cluster's reservations
	// are sorted (framework.SortReservations orders them totally).
	out := map[string][]framework.Reservation{}
	for _, rec := range l.entries {
		for _, e := range rec.entries {
			i, ok := snap.Index(e.cluster)
			if !ok {
				continue
			}
			if n := e.inFlight(snap.At(i).ProbedAt); n > 0 {
				out[e.cluster] = append(out[e.cluster], framework.Reservation{Request: e.request, Replicas: n})
			}
		}
	}
	for _, rs := range out {
		framework.SortReservations(rs)
	}
	return out, l.version
}

// newerThan reports whether resource version a is newer than b; versions
// that cannot be compared count as newer (the event is taken).
func newerThan(a, b string) bool {
	if a == b {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err != nil || c > 0
}

// ledgerHandler keeps the fleet's ledger in step with the bindings of r's
// kind as the cache sees them (from the first list on, so a restarted
// controller manager starts from what the API holds). It queues nothing.
func (r *Reconciler[T]) ledgerHandler() handler.TypedEventHandler[T, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	observe := func(b T) {
		if b.GetDeletionTimestamp() != nil && len(b.GetBindingSpec().Clusters) == 0 {
			r.fleet.ledger.forget(ledgerKey(r.kind.Name, b))
			return
		}
		r.fleet.ledger.observe(ledgerKey(r.kind.Name, b), b)
	}
	return handler.TypedFuncs[T, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[T], _ queue) { observe(e.Object) },
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[T], _ queue) { observe(e.ObjectNew) },
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[T], _ queue) {
			r.fleet.ledger.forget(ledgerKey(r.kind.Name, e.Object))
		},
	}
}
