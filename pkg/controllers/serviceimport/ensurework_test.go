package serviceimport

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestEnsureWorkFromAStaleCache: the cache may hold an import Work older
// than the stored one (the execution controller wrote its status since).
// The new manifests still reach it: the Work's own updates wake no
// reconcile here, so a write refused for the stale copy would leave the
// import behind.
func TestEnsureWorkFromAStaleCache(t *testing.T) {
	manifest := func(data string) []workv1alpha1.Manifest {
		return []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"shop"},"data":{"v":"` + data + `"}}`)}}}
	}
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-m1", Name: "mcs.shop.web", Annotations: map[string]string{AnnotationManifestsHash: "old"}},
		Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: manifest("old")}},
	}
	base := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(w).WithStatusSubresource(w).Build()
	stale := &workv1alpha1.Work{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(w), stale); err != nil {
		t.Fatal(err)
	}
	// The execution controller's status write: the stored Work moves on.
	applied := stale.DeepCopy()
	applied.Status.Conditions = []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue, Reason: "Applied", LastTransitionTime: metav1.Now()}}
	if err := base.Status().Update(context.Background(), applied); err != nil {
		t.Fatal(err)
	}
	// The cache still answers with the older copy.
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if wk, ok := obj.(*workv1alpha1.Work); ok {
				stale.DeepCopyInto(wk)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &Reconciler{client: c}
	if err := r.ensureWork(context.Background(), w.Namespace, w.Name, nil, manifest("new"), "new", false); err != nil {
		t.Fatalf("ensureWork: %v", err)
	}
	got := &workv1alpha1.Work{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[AnnotationManifestsHash] != "new" || !strings.Contains(string(got.Spec.Workload.Manifests[0].Raw), `"v":"new"`) {
		t.Fatalf("the Work holds hash %q and %s; want the new manifests", got.Annotations[AnnotationManifestsHash], got.Spec.Workload.Manifests[0].Raw)
	}
	if len(got.Status.Conditions) != 1 {
		t.Fatalf("the status written meanwhile was lost: %+v", got.Status.Conditions)
	}
}
