package fleetbench

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TestReconcilesReadsTheRegistry runs a real controller-runtime controller
// (no API server: its requests come from a channel) and checks that the
// reading finds its reconciles, their time and their queue waits where
// controller-runtime records them.
func TestReconcilesReadsTheRegistry(t *testing.T) {
	const name = "fleetbench-reading-test"
	const reconcileTime = 20 * time.Millisecond
	before, err := reconciles()
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[reconcile.Request]{
		SkipNameValidation: ptr.To(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			time.Sleep(reconcileTime)
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.TypedGenericEvent[string], 3)
	requests := handler.TypedFuncs[string, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: e.Object}})
		},
	}
	if err := c.Watch(source.TypedChannel(events, requests)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		events <- event.TypedGenericEvent[string]{Object: n}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = c.Start(ctx) }()

	var got ReconcileCount
	deadline := time.Now().Add(30 * time.Second)
	for got.Total < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		after, err := reconciles()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reconcileDelta(before, after) {
			if r.Controller == name {
				got = r
			}
		}
	}
	if got.Total != 3 || got.Errors != 0 {
		t.Fatalf("reconciles of %s: %+v, want 3 without errors", name, got)
	}
	if got.MeanSeconds < reconcileTime.Seconds() {
		t.Errorf("mean reconcile time %.3f s, want at least %.3f s (each reconcile sleeps that long)", got.MeanSeconds, reconcileTime.Seconds())
	}
	// The three requests were queued before the controller started: each
	// waited at least until then, the last behind the first two.
	if got.MeanQueueSeconds <= 0 {
		t.Errorf("mean queue wait %.3f s, want above 0", got.MeanQueueSeconds)
	}
}
