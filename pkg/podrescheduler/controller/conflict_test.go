package controller

import (
	"context"
	"testing"

	"golang.org/x/time/rate"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
)

// A workload whose cached copy is behind makes the retry state's
// version-checked patch conflict: the reconcile is requeued without an
// error (controller-runtime would log one), and the next one records the
// failure and deletes the pod.
func TestConflictIsRequeuedQuietly(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "job-uid",
		Annotations: map[string]string{annotations.SchedulingRetries: "3"}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train-x", UID: "pod-uid",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train", UID: "job-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}}}}},
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		conflicts int
	}{
		{name: "no conflict: recorded and deleted"},
		{name: "one conflict: requeued quietly, then recorded and deleted", conflicts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			left := tc.conflicts
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job.DeepCopy(), pod.DeepCopy()).
				WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if left > 0 {
						left--
						return apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, obj.GetName(), nil)
					}
					return c.Patch(ctx, obj, patch, opts...)
				}}).Build()
			r := &Reconciler{client: c, apiReader: c, recorder: events.NewFakeRecorder(10), detection: DefaultDetection(),
				limiter: rate.NewLimiter(rate.Inf, 1), conflicts: conflicts.NewRequeue()}
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)}
			for i := range tc.conflicts {
				res, err := r.Reconcile(context.Background(), req)
				if err != nil || res.RequeueAfter <= 0 {
					t.Fatalf("attempt %d: result %+v, error %v; want a quiet requeue", i, res, err)
				}
			}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("after the conflicts: %v", err)
			}
			got := &batchv1.Job{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatal(err)
			}
			if s, _, err := annotations.Read(got.Annotations); err != nil || len(s.FailedPods) != 1 {
				t.Errorf("retry state %+v (%v), want the pod's failure recorded once", s, err)
			}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				t.Errorf("pod still there (%v), want it deleted for its Job to recreate", err)
			}
		})
	}
}
