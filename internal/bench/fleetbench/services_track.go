package fleetbench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// tracker watches every member's imported EndpointSlices and records when
// each expected address reaches each member other than its own.
type tracker struct {
	mu      sync.Mutex
	members []string
	pending map[string]*arrival
	// latest is the last change expected of each export (by
	// exportIdentity), which the next change of that export overtakes.
	latest map[string]*arrival
	now    func() time.Time

	cancel    context.CancelFunc
	factories []informers.SharedInformerFactory
}

// arrival is one address written in one member's export: when it was
// written and when each other member first carried it.
type arrival struct {
	source string
	start  time.Time
	seen   map[string]time.Time
	// earlier is the change of the same export expected just before this
	// one. A write replaces an export's whole list of endpoints, so a
	// member that carries this change's address has moved past the
	// earlier one too: the earlier change counts as reached there, even
	// if that member never carried its address. When changes of one
	// export come faster than the fleet propagates them, the lists in
	// between are skipped, as they should be, and waiting for an address
	// that was already replaced would wait forever.
	earlier *arrival
	// overtaken: some member reached this change only through a later
	// change of its export.
	overtaken bool
}

func exportIdentity(ns, svc, source string) string { return ns + "/" + svc + "@" + source }

func arrivalKey(ns, svc, addr string) string { return ns + "/" + svc + "/" + addr }

func newTracker(members []string) *tracker {
	return &tracker{members: members, pending: map[string]*arrival{}, latest: map[string]*arrival{}, now: time.Now}
}

// expect registers an address that member source is about to write into
// Service ns/svc's export; it returns the key to wait for.
func (t *tracker) expect(ns, svc, source, addr string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := arrivalKey(ns, svc, addr)
	t.pending[k] = &arrival{source: source, seen: map[string]time.Time{}}
	return k
}

// expectChange is expect for an address that replaces an earlier change
// of the same export (see arrival.earlier).
func (t *tracker) expectChange(ns, svc, source, addr string) string {
	k := t.expect(ns, svc, source, addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	id := exportIdentity(ns, svc, source)
	a := t.pending[k]
	a.earlier, t.latest[id] = t.latest[id], a
	return k
}

// started records when the address's write went out.
func (t *tracker) started(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.pending[key]; a != nil {
		a.start = at
	}
}

// observe records that member carries slice now.
func (t *tracker) observe(member string, s *discoveryv1.EndpointSlice) {
	svc, source := s.Labels[mcsv1beta1.LabelServiceName], s.Labels[mcsv1beta1.LabelSourceCluster]
	if svc == "" || source == "" || source == member {
		return
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ep := range s.Endpoints {
		for _, addr := range ep.Addresses {
			a := t.pending[arrivalKey(s.Namespace, svc, addr)]
			if a == nil || a.source != source {
				continue
			}
			if _, ok := a.seen[member]; !ok {
				a.seen[member] = now
			}
			// The member has moved past every earlier change of this
			// export; once one of them was seen, so were those before it.
			for e := a.earlier; e != nil; e = e.earlier {
				if _, ok := e.seen[member]; ok {
					break
				}
				e.seen[member], e.overtaken = now, true
			}
		}
	}
}

// done reports whether key reached every member other than its own.
func (t *tracker) done(key string) bool {
	a := t.pending[key]
	return a != nil && len(a.seen) == len(t.members)-1
}

// await waits until every key is done; at ctx's end it names how many are
// not and where the first of them is missing.
func (t *tracker) await(ctx context.Context, keys []string, what string, log logr.Logger) error {
	next := time.Now().Add(trackerProgressEvery)
	err := poll(ctx, func() (bool, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if time.Now().After(next) {
			next = time.Now().Add(trackerProgressEvery)
			log.Info("waiting for "+what, "done", t.count(keys), "of", len(keys))
		}
		for _, k := range keys {
			if !t.done(k) {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	missing, example := 0, ""
	for _, k := range keys {
		if t.done(k) {
			continue
		}
		missing++
		if example == "" {
			a := t.pending[k]
			var absent []string
			for _, m := range t.members {
				if _, ok := a.seen[m]; !ok && m != a.source {
					absent = append(absent, m)
				}
			}
			example = fmt.Sprintf("%s from %s is missing in %v", k, a.source, absent)
		}
	}
	return fmt.Errorf("%w: %d of %d endpoint addresses have not reached every other member (%s)", err, missing, len(keys), example)
}

// trackerProgressEvery is how often a wait reports how far it got: a
// full-size import runs for many minutes.
const trackerProgressEvery = 30 * time.Second

// count is how many of keys reached every other member; t.mu is held.
func (t *tracker) count(keys []string) int {
	n := 0
	for _, k := range keys {
		if t.done(k) {
			n++
		}
	}
	return n
}

// overtaken counts the keys that some member reached only through a
// later change of the same export.
func (t *tracker) overtaken(keys []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, k := range keys {
		if a := t.pending[k]; a != nil && a.overtaken {
			n++
		}
	}
	return n
}

// latencies returns, for each key, the time from its write to the last
// other member carrying it, and to the first.
func (t *tracker) latencies(keys []string) (last, first []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		a := t.pending[k]
		if a == nil || len(a.seen) == 0 {
			continue
		}
		times := make([]time.Time, 0, len(a.seen))
		for _, at := range a.seen {
			times = append(times, at)
		}
		slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
		last = append(last, times[len(times)-1].Sub(a.start))
		first = append(first, times[0].Sub(a.start))
	}
	return last, first
}

// startTracker watches the imported EndpointSlices of every member of
// load and returns once the watches have listed them.
func startTracker(ctx context.Context, load *servicesLoad) (*tracker, error) {
	t := newTracker(load.memberNames())
	ctx, t.cancel = context.WithCancel(ctx)
	for _, m := range load.members {
		f := informers.NewSharedInformerFactoryWithOptions(m.kube, 0,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = mcsv1beta1.LabelServiceName }),
			informers.WithTransform(trimSlice))
		inf := f.Discovery().V1().EndpointSlices().Informer()
		member := m.name
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.observeObject(member, obj) },
			UpdateFunc: func(_, obj any) { t.observeObject(member, obj) },
		}); err != nil {
			t.stop()
			return nil, err
		}
		t.factories = append(t.factories, f)
		f.Start(ctx.Done())
	}
	for i, f := range t.factories {
		for _, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.stop()
				return nil, fmt.Errorf("watching the imported EndpointSlices of %s: %w", load.members[i].name, ctx.Err())
			}
		}
	}
	return t, nil
}

func (t *tracker) observeObject(member string, obj any) {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		t.observe(member, s)
	}
}

// stop ends the watches and drops their caches.
func (t *tracker) stop() {
	if t.cancel != nil {
		t.cancel()
	}
	for _, f := range t.factories {
		f.Shutdown()
	}
	t.factories = nil
}

// trimSlice keeps of a watched slice what the tracker reads.
func trimSlice(obj any) (any, error) {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		s.ManagedFields = nil
		s.Annotations = nil
	}
	return obj, nil
}
