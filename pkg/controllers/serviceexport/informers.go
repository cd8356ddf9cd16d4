package serviceexport

import (
	"context"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	mcsclient "sigs.k8s.io/mcs-api/pkg/client/clientset/versioned"
	mcsinformers "sigs.k8s.io/mcs-api/pkg/client/informers/externalversions"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// members holds the informers of every member served; notify is called
// with the member's name when anything watched there changes.
type members struct {
	notify func(cluster string)

	mu sync.Mutex
	m  map[string]*memberWatch
}

// memberWatch watches one member's ServiceExports and ServiceImports (once
// their CRDs are served) and its Services and EndpointSlices.
type memberWatch struct {
	clients *clusterclient.Clients
	// write is the member's MCS client for writes (with the request
	// timeout, unlike the informers').
	write  mcsclient.Interface
	kube   informers.SharedInformerFactory
	mcs    mcsinformers.SharedInformerFactory
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	mcsStarted bool

	// pending are the exports and imports changed since the last
	// reconcile (changes.go).
	pending *pending
}

func newMembers(notify func(string)) *members {
	return &members{notify: notify, m: map[string]*memberWatch{}}
}

// forClients returns the member's informers, (re)starting them when its
// clients changed (new credentials).
func (m *members) forClients(c *clusterclient.Clients) (*memberWatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.m[c.Cluster]; ok {
		if cur.clients == c {
			return cur, nil
		}
		cur.stop()
	}
	cfg := c.WatchConfig()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := mcsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	write, err := mcsclient.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &memberWatch{
		clients: c, ctx: ctx, cancel: cancel, write: write, pending: newPending(),
		// managedFields (the larger half of an imported EndpointSlice)
		// are read by nobody here.
		kube: informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithTransform(ctrlcache.TransformStripManagedFields())),
		mcs:  mcsinformers.NewSharedInformerFactoryWithOptions(mc, 0, mcsinformers.WithTransform(ctrlcache.TransformStripManagedFields())),
	}
	name := c.Cluster
	changed := func(obj any) {
		if w.pending.mark(changesOf(obj)...) {
			m.notify(name)
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	}
	for _, inf := range []cache.SharedIndexInformer{
		w.kube.Core().V1().Services().Informer(),
		w.kube.Discovery().V1().EndpointSlices().Informer(),
		w.mcs.Multicluster().V1beta1().ServiceExports().Informer(),
		w.mcs.Multicluster().V1beta1().ServiceImports().Informer(),
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			cancel()
			return nil, err
		}
	}
	w.kube.Start(ctx.Done())
	m.m[name] = w
	return w, nil
}

// startMCS starts the ServiceExport and ServiceImport informers, once the
// member serves their CRDs: started earlier, they would log a failed list
// every few seconds until then.
func (w *memberWatch) startMCS() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.mcsStarted {
		w.mcsStarted = true
		w.mcs.Start(w.ctx.Done())
	}
}

// synced reports whether every informer finished its first list.
func (w *memberWatch) synced() bool {
	w.mu.Lock()
	started := w.mcsStarted
	w.mu.Unlock()
	return started &&
		w.kube.Core().V1().Services().Informer().HasSynced() &&
		w.kube.Discovery().V1().EndpointSlices().Informer().HasSynced() &&
		w.mcs.Multicluster().V1beta1().ServiceExports().Informer().HasSynced() &&
		w.mcs.Multicluster().V1beta1().ServiceImports().Informer().HasSynced()
}

func (w *memberWatch) stop() {
	w.cancel()
	w.kube.Shutdown()
	w.mcs.Shutdown()
}

// mark records a change in a member whose informers run (the hub's
// verdict on one of its exports).
func (m *members) mark(cluster string, c change) {
	m.mu.Lock()
	w := m.m[cluster]
	m.mu.Unlock()
	if w != nil {
		w.pending.mark(c)
	}
}

// stop stops a member's informers, if any.
func (m *members) stop(cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.m[cluster]; ok {
		cur.stop()
		delete(m.m, cluster)
	}
}

// stopAll stops every member's informers; the manager calls it on shutdown.
func (m *members) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, cur := range m.m {
		cur.stop()
		delete(m.m, name)
	}
}
