package membershiptest

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Work builds a Work for cluster in its execution namespace, labelled for
// the cluster, holding objs as manifests (typed objects need their
// apiVersion and kind set).
func Work(t testing.TB, cluster, name string, labels map[string]string, objs ...any) *workv1alpha1.Work {
	t.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace: workv1alpha1.ExecutionNamespacePrefix + cluster,
		Name:      name,
		Labels:    map[string]string{workv1alpha1.LabelCluster: cluster},
	}}
	for k, v := range labels {
		w.Labels[k] = v
	}
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w
}

// CreateWork creates w on the hub, creating its namespace if needed.
func CreateWork(t testing.TB, hub client.Client, w *workv1alpha1.Work) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
}
