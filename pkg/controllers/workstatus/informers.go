package workstatus

import (
	"context"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// managedSelector limits member informers to what Shepherd applied.
var managedSelector = labels.SelectorFromSet(labels.Set{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}).String()

// members holds the informers of every member; notify is called with the
// Work (namespace/name) an informed object belongs to when it changes.
type members struct {
	notify func(work types.NamespacedName)

	mu sync.Mutex
	m  map[string]*memberInformers
}

// memberInformers are the informers of one member, built from one set of
// clients.
type memberInformers struct {
	clients *clusterclient.Clients
	factory dynamicinformer.DynamicSharedInformerFactory
	ctx     context.Context
	cancel  context.CancelFunc
	notify  func(types.NamespacedName)

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// dc builds the pending pods' informer, started on first use.
	dc          dynamic.Interface
	pendingPods *pendingPods
}

func newMembers(notify func(types.NamespacedName)) *members {
	return &members{notify: notify, m: map[string]*memberInformers{}}
}

// forClients returns the member's informers, (re)starting them when the
// member's clients changed.
func (m *members) forClients(c *clusterclient.Clients) (*memberInformers, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.m[c.Cluster]; ok {
		if cur.clients == c {
			return cur, nil
		}
		cur.stop()
	}
	dc, err := dynamic.NewForConfig(c.WatchConfig())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	mi := &memberInformers{
		clients: c,
		factory: dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, metav1.NamespaceAll,
			func(o *metav1.ListOptions) { o.LabelSelector = managedSelector }),
		ctx: ctx, cancel: cancel, notify: m.notify, dc: dc,
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
	}
	m.m[c.Cluster] = mi
	return mi, nil
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

func (mi *memberInformers) stop() {
	mi.cancel()
	mi.factory.Shutdown()
}

// get returns the member's object of gvr, starting the informer for gvr on
// first use. synced is false until the informer's first list completed; a
// missing object is (nil, true).
func (mi *memberInformers) get(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, synced bool, err error) {
	inf := mi.informer(gvr)
	if !inf.HasSynced() {
		return nil, false, nil
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, true, err
	}
	return item.(*unstructured.Unstructured), true, nil
}

// pods returns the member's Pending pods, starting their informer on
// first use.
func (mi *memberInformers) pods() *pendingPods {
	mi.mu.Lock()
	defer mi.mu.Unlock()
	if mi.pendingPods == nil {
		mi.pendingPods = newPendingPods(mi.dc, mi.notify)
		go mi.pendingPods.informer.Run(mi.ctx.Done())
	}
	return mi.pendingPods
}

// unwatchPods forgets a Work's pods, if its member's pods are watched.
func (mi *memberInformers) unwatchPods(work types.NamespacedName) {
	mi.mu.Lock()
	p := mi.pendingPods
	mi.mu.Unlock()
	if p != nil {
		p.watch(work, "", nil)
	}
}

func (mi *memberInformers) informer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	mi.mu.Lock()
	defer mi.mu.Unlock()
	if inf, ok := mi.informers[gvr]; ok {
		return inf
	}
	inf := mi.factory.ForResource(gvr).Informer()
	// Errors only arise on a started informer; this one is new.
	_ = inf.SetTransform(dropManagedFields)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { mi.changed(o) },
		UpdateFunc: func(old, o any) { mi.changedFrom(old, o) },
		DeleteFunc: func(o any) { mi.changed(o) },
	})
	mi.informers[gvr] = inf
	mi.factory.Start(mi.ctx.Done())
	return inf
}

// changedFrom notifies for updates that can change what is reported: the
// status, and the health, which an interpreter may judge from any field (a
// HealthInterpreter for ConfigMaps reads data: a ConfigMap has neither
// status nor generation, so an edit of its data changes nothing else).
// Only updates that change nothing but the resourceVersion (e.g. a relist)
// are dropped.
func (mi *memberInformers) changedFrom(old, o any) {
	a, okA := old.(*unstructured.Unstructured)
	b, okB := o.(*unstructured.Unstructured)
	if okA && okB && equalButResourceVersion(a, b) {
		return
	}
	mi.changed(o)
}

func equalButResourceVersion(a, b *unstructured.Unstructured) bool {
	if a.GetResourceVersion() == b.GetResourceVersion() {
		return reflect.DeepEqual(a.Object, b.Object)
	}
	a, b = a.DeepCopy(), b.DeepCopy()
	a.SetResourceVersion("")
	b.SetResourceVersion("")
	return reflect.DeepEqual(a.Object, b.Object)
}

func (mi *memberInformers) changed(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if ns, name, ok := splitKey(u.GetAnnotations()[workv1alpha1.AnnotationWork]); ok {
		mi.notify(types.NamespacedName{Namespace: ns, Name: name})
	}
}

// dropManagedFields keeps managedFields, often the larger half of an
// object, out of the cache.
func dropManagedFields(o any) (any, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return o, nil
}

func splitKey(key string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(key, "/")
	return namespace, name, ok && namespace != "" && name != ""
}
