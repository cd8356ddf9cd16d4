package clustercleanup

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestFinalizerConflictIsRetriedQuietly: a Cluster written by someone else
// between the read and the finalizer's patch is a conflict; the reconcile
// asks to be retried and returns no error (which controller-runtime would
// log as one), and the retry adds the finalizer.
func TestFinalizerConflictIsRetriedQuietly(t *testing.T) {
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	left := 1
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cluster).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if left > 0 {
				left--
				return apierrors.NewConflict(schema.GroupResource{Group: "cluster.shepherd.io", Resource: "clusters"}, obj.GetName(), nil)
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
	r := &Reconciler{client: c, recorder: &events.FakeRecorder{}, conflicts: conflicts.NewRequeue()}
	req := reconcile.Request{NamespacedName: client.ObjectKey{Name: "m1"}}

	res, err := r.Reconcile(context.Background(), req)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("a conflict gave %+v, %v; want a requeue and no error", res, err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	got := &clusterv1alpha1.Cluster{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(got, clusterv1alpha1.FinalizerCleanup) {
		t.Fatalf("finalizers %v, want %s", got.Finalizers, clusterv1alpha1.FinalizerCleanup)
	}
}
