package execution

import (
	"context"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestReconcileRetriesAConflictQuietly: a write that lost a race to
// another writer of the Work (the work status controller writes its status
// too) is retried after a short wait and not returned as an error, which
// controller-runtime would log as one; any other error is returned.
func TestReconcileRetriesAConflictQuietly(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shepherd-es-m1", Name: "shop.web-deployment"}}
	for _, tc := range []struct {
		name      string
		err       error
		wantError bool
	}{
		{"a conflict: a quiet retry", apierrors.NewConflict(schema.GroupResource{Group: "work.shepherd.io", Resource: "works"}, req.Name, nil), false},
		{"another error: returned", apierrors.NewServiceUnavailable("hub restarting"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return tc.err
				},
			}).Build()
			r := &Reconciler{Client: c, conflicts: conflicts.NewRequeue()}
			res, err := r.Reconcile(context.Background(), req)
			if (err != nil) != tc.wantError {
				t.Fatalf("error %v, want error: %v", err, tc.wantError)
			}
			if !tc.wantError && res.RequeueAfter <= 0 {
				t.Errorf("result %+v: want a retry", res)
			}
		})
	}
}
