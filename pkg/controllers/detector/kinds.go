package detector

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// kinds starts watches on template kinds on demand and remembers the
// version each is read in: the API server's preferred version of its
// group, which is also the apiVersion bindings name.
//
// Watches go through the manager's shared informer cache with unstructured
// objects (one informer per kind, holding whole templates): the detector
// needs the whole template anyway (replicas, pod requests) and the binding
// controller reads the same cache to build Works, so each template is held
// once and read without a request to the API server. A kind is watched
// from the first time a policy names it until the process ends: informers
// are cheap to keep and a policy naming the kind again must not wait for a
// new one to sync.
//
// A watch starts under its own lock (starting), never under mu, which
// lookups take: ctrl.Watch waits for the detector's controller while that
// controller starts, its start waits for its policy events to be handled,
// and handling them looks kinds up. With the start under mu, a policy
// reconciled at that moment stopped the detector for its whole cache-sync
// timeout.
type kinds struct {
	mapper meta.RESTMapper
	cache  cache.Cache

	// starting serializes the start of watches (and guards ctrl, handler
	// and pred).
	starting sync.Mutex
	ctrl     controller.TypedController[TemplateKey]
	handler  handler.TypedEventHandler[*unstructured.Unstructured, TemplateKey]
	pred     predicate.TypedPredicate[*unstructured.Unstructured]

	// mu guards watched only: held for a map access, never across a call.
	mu      sync.RWMutex
	watched map[schema.GroupKind]schema.GroupVersionKind
}

func newKinds(mapper meta.RESTMapper, c cache.Cache) *kinds {
	return &kinds{mapper: mapper, cache: c, watched: map[schema.GroupKind]schema.GroupVersionKind{}}
}

// bind sets the controller that receives template events; ensure must not
// be called before.
func (k *kinds) bind(c controller.TypedController[TemplateKey], h handler.TypedEventHandler[*unstructured.Unstructured, TemplateKey], p predicate.TypedPredicate[*unstructured.Unstructured]) {
	k.starting.Lock()
	defer k.starting.Unlock()
	k.ctrl, k.handler, k.pred = c, h, p
}

// lookup returns the version gk is watched in; false when it is not.
func (k *kinds) lookup(gk schema.GroupKind) (schema.GroupVersionKind, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	gvk, ok := k.watched[gk]
	return gvk, ok
}

// ensure watches gk's templates if it does not yet. It fails when the API
// server does not serve the kind (a CRD not installed yet); the caller
// retries later.
func (k *kinds) ensure(gk schema.GroupKind) (schema.GroupVersionKind, error) {
	if gvk, ok := k.lookup(gk); ok {
		return gvk, nil
	}
	if resourceselector.ExcludedKind(gk) {
		return schema.GroupVersionKind{}, fmt.Errorf("%s is never propagated", gk)
	}
	m, err := k.mapper.RESTMapping(gk)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	k.starting.Lock()
	defer k.starting.Unlock()
	if gvk, ok := k.lookup(gk); ok {
		return gvk, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(m.GroupVersionKind)
	if err := k.ctrl.Watch(source.TypedKind(k.cache, obj, k.handler, k.pred)); err != nil {
		return schema.GroupVersionKind{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.watched[gk] = m.GroupVersionKind
	watchedKinds.Set(float64(len(k.watched)))
	return m.GroupVersionKind, nil
}
