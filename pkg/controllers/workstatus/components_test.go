package workstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// TestUnschedulableComponents: a RayCluster's Pending pods, labelled as
// KubeRay labels them, are counted per component by the interpreter's
// PodComponents and the one unschedulable rule, in the workload's order
// of components; pods of no component (no group label, a group the
// workload no longer has) count in the total only.
func TestUnschedulableComponents(t *testing.T) {
	t0 := time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)
	ray := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"namespace": "shop", "name": "train"},
		"spec": map[string]any{
			"headGroupSpec": map[string]any{"template": map[string]any{}},
			"workerGroupSpecs": []any{
				map[string]any{"groupName": "cpu", "replicas": int64(2)},
				map[string]any{"groupName": "gpu", "replicas": int64(4)},
			},
		},
	}}
	names, of, ok := interpreter.New().PodComponents(ray)
	if !ok {
		t.Fatal("a RayCluster's pods are not told apart")
	}
	// pod is a pod of the RayCluster; since zero: scheduled, else
	// unschedulable since then.
	pod := func(labels map[string]string, since time.Time) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if since.IsZero() {
			p.Spec.NodeName = "n1"
			return p
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.NewTime(since)}}
		return p
	}
	head := map[string]string{"ray.io/cluster": "train", "ray.io/node-type": "head", "ray.io/group": "headgroup"}
	worker := func(group string) map[string]string {
		return map[string]string{"ray.io/cluster": "train", "ray.io/node-type": "worker", "ray.io/group": group}
	}
	uc := func(name string, n int32, since time.Time) workv1alpha1.UnschedulableComponent {
		return workv1alpha1.UnschedulableComponent{Name: name, Replicas: n, Since: metav1.NewTime(since)}
	}
	for _, tc := range []struct {
		name      string
		pods      []*corev1.Pod
		want      []workv1alpha1.UnschedulableComponent
		wantTotal int32
	}{
		{name: "none Pending", wantTotal: 0},
		{name: "all scheduled", pods: []*corev1.Pod{pod(head, time.Time{}), pod(worker("gpu"), time.Time{})}},
		{name: "workers of one group, the oldest since; scheduled ones left out", pods: []*corev1.Pod{
			pod(worker("gpu"), t0.Add(time.Minute)), pod(worker("gpu"), t0), pod(worker("gpu"), time.Time{}), pod(worker("cpu"), time.Time{}),
		}, want: []workv1alpha1.UnschedulableComponent{uc("gpu", 2, t0)}, wantTotal: 2},
		{name: "in the workload's order, whatever the pods' order", pods: []*corev1.Pod{
			pod(worker("gpu"), t0), pod(worker("cpu"), t0.Add(time.Hour)), pod(head, t0.Add(2*time.Hour)),
		}, want: []workv1alpha1.UnschedulableComponent{uc("ray-head", 1, t0.Add(2*time.Hour)), uc("cpu", 1, t0.Add(time.Hour)), uc("gpu", 1, t0)}, wantTotal: 3},
		{name: "pods of no component count in the total only", pods: []*corev1.Pod{
			pod(map[string]string{"ray.io/cluster": "train"}, t0),
			pod(worker("removed"), t0),
			pod(worker("cpu"), t0.Add(time.Minute)),
		}, want: []workv1alpha1.UnschedulableComponent{uc("cpu", 1, t0.Add(time.Minute))}, wantTotal: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unschedulableComponents(tc.pods, names, of)
			if !sameComponents(got, tc.want) {
				t.Errorf("components %+v, want %+v", got, tc.want)
			}
			if n, _ := unschedulable(tc.pods); n != tc.wantTotal {
				t.Errorf("total %d, want %d", n, tc.wantTotal)
			}
		})
	}
}
