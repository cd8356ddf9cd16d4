package workstatus

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
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestStatusConflictIsARetryNotAnError: the aggregated status write that
// loses the race with another writer of the binding (the scheduler, the
// binding controller) is retried after a back-off and returns no error,
// which controller-runtime would log as "Reconciler error" on a healthy
// run; the retry writes the status.
func TestStatusConflictIsARetryNotAnError(t *testing.T) {
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: "web-deployment"}
	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"},
		Spec: workv1alpha1.BindingSpec{Resource: tmplRef, Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}}}}
	w := work("m1", "True", raw(`{"replicas":2}`), healthy)
	w.Annotations = map[string]string{workv1alpha1.AnnotationBinding: ref.String()}
	left := 1
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(rb, &w).WithStatusSubresource(rb).
		WithIndex(&workv1alpha1.Work{}, index.WorksByBinding, func(o client.Object) []string {
			if r, ok := bindingutil.BindingOf(o.(*workv1alpha1.Work)); ok {
				return []string{r.String()}
			}
			return nil
		}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if left > 0 {
				left--
				return apierrors.NewConflict(schema.GroupResource{Group: workv1alpha1.GroupName, Resource: "resourcebindings"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	r := &bindingReconciler[workv1alpha1.ResourceBinding, *workv1alpha1.ResourceBinding]{kind: workv1alpha1.KindResourceBinding, client: c, templates: c,
		recorder: events.NewFakeRecorder(10), in: interpreter.Builtin(), conflicts: conflicts.NewRequeue()}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)}

	res, err := r.Reconcile(context.Background(), req)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("a conflicting status write: result %+v, error %v; want a requeue after a back-off and no error", res, err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := &workv1alpha1.ResourceBinding{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.AggregatedStatus) != 1 || got.Status.AggregatedStatus[0].ClusterName != "m1" {
		t.Fatalf("the retry did not write the status: %+v", got.Status.AggregatedStatus)
	}
}
