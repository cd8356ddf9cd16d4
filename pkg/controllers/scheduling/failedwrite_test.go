package scheduling

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestFailedPlacementWrite: when the write of a placement fails, the
// replicas it assumed in flight stay assumed unless the API server holds
// a binding without them. A write can fail on the client's side (a
// timeout, a connection lost) after the API server stored it; dropping the
// assumption then would count the room as free until the binding's event
// arrives, and a burst's next cycles would place other workloads into it.
func TestFailedPlacementWrite(t *testing.T) {
	gr := schema.GroupResource{Group: workv1alpha1.GroupName, Resource: "resourcebindings"}
	lostReply := &url.Error{Op: "Patch", URL: "https://hub/apis", Err: context.DeadlineExceeded}
	for _, tc := range []struct {
		name string
		// stored: the spec patch reaches the store before err is returned.
		stored  bool
		err     error
		readErr error
		// want: the head's 8 cores stay in flight on the cluster.
		want bool
	}{
		{"the reply is lost after the write was stored", true, lostReply, nil, true},
		{"the API server timed out after storing it", true, apierrors.NewTimeoutError("the write took too long", 1), nil, true},
		{"the API server timed out before storing it", false, apierrors.NewTimeoutError("the write took too long", 1), nil, false},
		{"the reply is lost and the binding cannot be read", false, lostReply, errors.New("connection refused"), true},
		{"a conflict stores nothing", false, apierrors.NewConflict(gr, "pool-workerpool", errors.New("changed")), nil, false},
		{"an invalid write stores nothing", false, apierrors.NewBadRequest("invalid"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := poolBinding(0, nil, false)
			cluster := poolCluster("m1", "16")
			failed := false
			base := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(b, cluster).WithStatusSubresource(b).Build()
			c := interceptor.NewClient(base, interceptor.Funcs{
				Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if _, ok := obj.(*workv1alpha1.ResourceBinding); !ok || failed {
						return cl.Patch(ctx, obj, patch, opts...)
					}
					failed = true
					if tc.stored {
						if err := cl.Patch(ctx, obj, patch, opts...); err != nil {
							return err
						}
					}
					return tc.err
				},
				Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*workv1alpha1.ResourceBinding); ok && failed && tc.readErr != nil {
						return tc.readErr
					}
					return cl.Get(ctx, key, obj, opts...)
				},
			})
			r := &Reconciler[*workv1alpha1.ResourceBinding]{
				client: c, apiReader: c, kind: bindingutil.ResourceBindings(), fleet: NewFleet(c, interpreter.New()),
				recorder: events.NewFakeRecorder(10), conflicts: conflicts.NewRequeue(), opts: Options{}.withDefaults(),
				backoff: workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](), now: func() time.Time { return tFlight },
			}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}); err == nil && !failed {
				t.Fatal("the reconcile wrote no placement")
			}
			if !failed {
				t.Fatal("the placement's write was not attempted")
			}
			snap, err := r.fleet.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			rs, _ := r.fleet.ledger.reservations(snap)
			inFlight := false
			for _, res := range rs["m1"] {
				inFlight = inFlight || (res.Replicas == 1 && res.Request.MilliCPU == 8000)
			}
			if inFlight != tc.want {
				t.Errorf("the head in flight on m1: %v, want %v (reservations %v)", inFlight, tc.want, rs)
			}
		})
	}
}
