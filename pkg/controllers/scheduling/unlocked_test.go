package scheduling

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestNothingToScheduleTakesNoCycle: a binding whose event needs no
// cycle (most of them: every write of a placed binding wakes the
// scheduler) is decided without the cycle lock, so it never waits behind
// the cycle that holds it, nor holds the others up while it confirms a
// retry with the API server. The test holds the lock throughout; a
// reconcile that took it would never return.
func TestNothingToScheduleTakesNoCycle(t *testing.T) {
	cluster := poolCluster("m1", "16")
	// One cluster at most: a placement that does not take every eligible
	// cluster, so a placed binding has no fleet check to run.
	oneCluster := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
		{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: ptr.To[int32](1)}}}
	placed := reconcileOnce(t, poolBinding(0, oneCluster, false), cluster)
	if !meta.IsStatusConditionTrue(placed.Status.Conditions, workv1alpha1.ConditionScheduled) {
		t.Fatalf("the set-up placement is not Scheduled: %+v", placed.Status.Conditions)
	}
	// The cache a moment after the cycle's spec patch: the placement's
	// hash is there, its Scheduled condition not yet.
	behind := placed.DeepCopy()
	behind.Status.Conditions = nil

	for _, tc := range []struct {
		name string
		// cached is what the reconciler's cache holds; the API server
		// holds placed.
		cached *workv1alpha1.ResourceBinding
		// apiReads is how many reads of the binding go to the API server.
		apiReads int32
	}{
		{"placed, nothing changed", placed, 0},
		{"the cache behind the cycle's status patch: confirmed with the API server", behind, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(placed.DeepCopy(), cluster.DeepCopy()).WithStatusSubresource(placed).Build()
			var reads atomic.Int32
			apiReader := interceptor.NewClient(api, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*workv1alpha1.ResourceBinding); ok {
						reads.Add(1)
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			cached := tc.cached.DeepCopy()
			cached.ResourceVersion = ""
			cache := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cached, cluster.DeepCopy()).WithStatusSubresource(cached).Build()
			r := &Reconciler[*workv1alpha1.ResourceBinding]{
				client: cache, apiReader: apiReader, kind: bindingutil.ResourceBindings(), fleet: NewFleet(cache, interpreter.New()),
				recorder: events.NewFakeRecorder(10), conflicts: conflicts.NewRequeue(), opts: Options{}.withDefaults(),
				backoff: workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](), now: func() time.Time { return tFlight },
			}
			version := cachedVersion(t, cache, placed)
			r.fleet.ledger.cycle.Lock()
			defer r.fleet.ledger.cycle.Unlock()
			done := make(chan error, 1)
			go func() {
				_, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: placed.Namespace, Name: placed.Name}})
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the reconcile waited for the cycle lock, with nothing to schedule")
			}
			if got := reads.Load(); got != tc.apiReads {
				t.Errorf("read the binding from the API server %d times, want %d", got, tc.apiReads)
			}
			if got := cachedVersion(t, cache, placed); got != version {
				t.Errorf("the binding was written: resourceVersion %s, was %s", got, version)
			}
		})
	}
}

// cachedVersion reads b's resourceVersion from c.
func cachedVersion(t *testing.T, c client.Client, b *workv1alpha1.ResourceBinding) string {
	t.Helper()
	got := &workv1alpha1.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	return got.ResourceVersion
}
