package bindingutil

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type named string

func TestCoalesced(t *testing.T) {
	toRequest := func(n named) (reconcile.Request, bool) {
		if n == "" {
			return reconcile.Request{}, false
		}
		return reconcile.Request{NamespacedName: types.NamespacedName{Name: string(n)}}, true
	}
	const window = time.Second
	cases := []struct {
		name   string
		window time.Duration
		events []named
		// atOnce is the queue length right after the events, later after
		// the window passed.
		atOnce, later int
	}{
		{"a burst is one request after the window", window, []named{"a", "a", "a", "a", "a"}, 0, 1},
		{"two objects, two requests", window, []named{"a", "b", "a", "b"}, 0, 2},
		{"dropped events enqueue nothing", window, []named{"", ""}, 0, 0},
		{"no window: at once, still deduplicated", 0, []named{"a", "a", "b"}, 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := testingclock.NewFakeClock(time.Now())
			q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
				workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clock})
			defer q.ShutDown()
			h := Coalesced(tc.window, toRequest)
			ctx := context.Background()
			for i, n := range tc.events {
				switch i % 3 {
				case 0:
					h.Generic(ctx, event.TypedGenericEvent[named]{Object: n}, q)
				case 1:
					h.Update(ctx, event.TypedUpdateEvent[named]{ObjectOld: n, ObjectNew: n}, q)
				default:
					h.Create(ctx, event.TypedCreateEvent[named]{Object: n}, q)
				}
			}
			if got := q.Len(); got != tc.atOnce {
				t.Fatalf("right after the events: %d requests queued, want %d", got, tc.atOnce)
			}
			clock.Step(window)
			deadline := time.Now().Add(5 * time.Second)
			for q.Len() < tc.later && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := q.Len(); got != tc.later {
				t.Fatalf("after the window: %d requests queued, want %d", got, tc.later)
			}
		})
	}
}
