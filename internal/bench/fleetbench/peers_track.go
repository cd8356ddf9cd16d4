package fleetbench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// placements watches the bindings and Works of the namespaces a peer scenario
// places from, and stamps when each namespace is done: as many bindings
// Scheduled and as many Works applied as it expects. Its tallies are kept
// as events arrive, so that asking costs nothing at a hundred thousand
// Works (listing them from a cache every poll would copy them all), and
// its cache keeps no manifests: what the process holds is the hub's, the
// controllers' and the simulator's, and little of the benchmark's own.
type placements struct {
	// Reader reads the cached bindings (for their rollout status) and
	// Works (without manifests).
	client.Reader

	mu   sync.Mutex
	tals map[string]*tally
	// works remembers each Work's namespace and state, so that an update
	// moves the counts it moved.
	works map[string]workState
}

// tally is what one namespace expects and has.
type tally struct {
	wantScheduled, wantWorks int
	// scheduled holds each binding's state; nScheduled counts the true.
	scheduled      map[string]bool
	nScheduled     int
	works, applied int
	doneAt         time.Time
}

type workState struct {
	ns      string
	applied bool
}

// watchPlacements starts the watches and waits for them to sync.
func watchPlacements(ctx context.Context, cfg *rest.Config) (*placements, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme, DefaultUnsafeDisableDeepCopy: ptr.To(true), DefaultTransform: slim})
	if err != nil {
		return nil, err
	}
	t := &placements{Reader: c, tals: map[string]*tally{}, works: map[string]workState{}}
	for _, w := range []struct {
		obj client.Object
		on  func(any)
	}{{&workv1alpha1.ResourceBinding{}, t.onBinding}, {&workv1alpha1.Work{}, t.onWork}} {
		inf, err := c.GetInformer(ctx, w.obj)
		if err != nil {
			return nil, err
		}
		on := w.on
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the hub's bindings and Works: %w", context.Cause(ctx))
	}
	return t, nil
}

// slim drops what placements never reads: managed fields, and a Work's
// manifests and their statuses (most of its size).
func slim(o any) (any, error) {
	if obj, ok := o.(client.Object); ok {
		obj.SetManagedFields(nil)
	}
	if w, ok := o.(*workv1alpha1.Work); ok {
		w.Spec.Workload.Manifests = nil
		w.Status.ManifestStatuses = nil
	}
	return o, nil
}

// expect registers namespace ns: it is done once scheduled of its
// bindings are Scheduled and works of its Works applied.
func (t *placements) expect(ns string, scheduled, works int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tals[ns] = &tally{wantScheduled: scheduled, wantWorks: works, scheduled: map[string]bool{}}
}

func (t *placements) onBinding(o any) {
	b, ok := o.(*workv1alpha1.ResourceBinding)
	if !ok {
		return
	}
	at := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	tl := t.tals[b.Namespace]
	if tl == nil {
		return
	}
	is, was := meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionScheduled), tl.scheduled[b.Name]
	tl.scheduled[b.Name] = is
	switch {
	case is && !was:
		tl.nScheduled++
	case !is && was:
		tl.nScheduled--
	}
	tl.check(at)
}

// onWork counts a Work as applied once its Applied condition is True for
// its latest spec.
func (t *placements) onWork(o any) {
	w, ok := o.(*workv1alpha1.Work)
	if !ok {
		return
	}
	now := time.Now()
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
	st := workState{ns: w.Labels[workv1alpha1.LabelBindingNamespace], applied: c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation}
	key := w.Namespace + "/" + w.Name
	t.mu.Lock()
	defer t.mu.Unlock()
	tl := t.tals[st.ns]
	if tl == nil {
		return
	}
	old, seen := t.works[key]
	t.works[key] = st
	if !seen {
		tl.works++
	}
	switch {
	case st.applied && (!seen || !old.applied):
		tl.applied++
	case !st.applied && seen && old.applied:
		tl.applied--
	}
	tl.check(now)
}

// check stamps the first moment the tally is complete; t.mu is held.
func (tl *tally) check(now time.Time) {
	if tl.doneAt.IsZero() && tl.works == tl.wantWorks && tl.applied == tl.wantWorks && tl.nScheduled >= tl.wantScheduled {
		tl.doneAt = now
	}
}

// doneAt is when namespace ns was first done (zero: not yet).
func (t *placements) doneAt(ns string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tl := t.tals[ns]; tl != nil {
		return tl.doneAt
	}
	return time.Time{}
}

// waitDone polls until every namespace of nss is done, or timeout; a
// timeout names the first namespace not done with its counts.
func (t *placements) waitDone(ctx context.Context, nss []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) { return t.pending(nss) == "", nil })
	if err != nil {
		return fmt.Errorf("not placed within %s: %s", timeout, t.pending(nss))
	}
	return nil
}

// pending describes the first namespace of nss not done ("" when all are).
func (t *placements) pending(nss []string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ns := range nss {
		tl := t.tals[ns]
		if tl == nil || !tl.doneAt.IsZero() {
			continue
		}
		return fmt.Sprintf("namespace %s: %d of %d bindings Scheduled, %d of %d Works applied (%d written)", ns, tl.nScheduled, tl.wantScheduled, tl.applied, tl.wantWorks, tl.works)
	}
	return ""
}

// worksIn counts the Works seen for namespaces nss.
func (t *placements) worksIn(nss []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ns := range nss {
		if tl := t.tals[ns]; tl != nil {
			n += tl.works
		}
	}
	return n
}
