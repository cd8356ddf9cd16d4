package detector

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// blockingController is a controller whose Watch blocks until released, as
// a real one's does while the controller starts and waits for its sources.
type blockingController struct {
	controller.TypedController[TemplateKey]
	entered chan struct{}
	release chan struct{}
}

func (c *blockingController) Watch(source.TypedSource[TemplateKey]) error {
	close(c.entered)
	<-c.release
	return nil
}

// A lookup must not wait for a watch being started: the detector's own
// start waits for lookups (its policy events look kinds up) while a
// policy reconciler's Watch waits for that start.
func TestLookupDoesNotWaitForAWatchStarting(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{cm.GroupVersion(), deploy.GroupVersion()})
	mapper.Add(cm, meta.RESTScopeNamespace)
	mapper.Add(deploy, meta.RESTScopeNamespace)

	k := newKinds(mapper, nil)
	c := &blockingController{entered: make(chan struct{}), release: make(chan struct{})}
	k.bind(c, templateHandler(), templatePredicate())
	k.watched[deploy.GroupKind()] = deploy

	ensured := make(chan error, 1)
	go func() {
		_, err := k.ensure(cm.GroupKind())
		ensured <- err
	}()
	select {
	case <-c.entered:
	case err := <-ensured:
		t.Fatalf("ensure returned before starting a watch: %v", err)
	}

	looked := make(chan bool, 1)
	go func() {
		_, ok := k.lookup(deploy.GroupKind())
		looked <- ok
	}()
	select {
	case ok := <-looked:
		if !ok {
			t.Errorf("lookup of a watched kind: not watched")
		}
	case <-time.After(10 * time.Second):
		// Not a timing assertion: the lookup waits on a lock the
		// blocked Watch holds, for ever.
		t.Fatal("a lookup waited for a watch being started")
	}
	if _, ok := k.lookup(cm.GroupKind()); ok {
		t.Errorf("a kind whose watch has not started yet counts as watched")
	}

	close(c.release)
	if err := <-ensured; err != nil {
		t.Fatal(err)
	}
	if gvk, ok := k.lookup(cm.GroupKind()); !ok || gvk != cm {
		t.Errorf("after its watch started, lookup = %v, %v; want %v, true", gvk, ok, cm)
	}
}
