package workstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// A RayCluster whose components a customization divides (its worker
// groups divisible) runs a copy per cluster, each with its share: the
// status of its copies sums on the hub as any workload's does, and each
// cluster counts the Pending pods of what it runs, by component, with the
// kind's built-in labels (a customization of the components rule keeps
// them): a cluster running only workers reports no head. The rule reads
// each component's replicas from the field its replicasPath names, so
// that a copy holding a cluster's share reads as well as the template.
func TestDividedGangStatus(t *testing.T) {
	in := interpreter.New()
	c, errs := interpreter.CompileCustomization(&configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "divisible-rayclusters"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.HealthTarget{APIVersion: "ray.io/v1", Kind: "RayCluster"},
			Customizations: configv1alpha1.Customizations{
				Components: &configv1alpha1.ComponentCustomization{Expression: "[{'name': 'ray-head', 'replicas': object.spec.headGroupSpec.replicas, 'replicasPath': '/spec/headGroupSpec/replicas'}] + " +
					"object.spec.workerGroupSpecs.transformList(i, g, {'name': g.groupName, 'replicas': g.replicas, 'divisible': true, " +
					"'replicasPath': '/spec/workerGroupSpecs/' + string(i) + '/replicas'})"},
				StatusAggregation: &configv1alpha1.StatusAggregation{SummedFields: []string{"readyWorkerReplicas", "desiredWorkerReplicas"}},
			},
		},
	})
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	in.SetCustom(c.GVK, c.Custom)

	// The copy member2 runs: the head at 0, its share of gpu workers.
	copyOnMember2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"namespace": "shop", "name": "train"},
		"spec": map[string]any{
			"headGroupSpec":    map[string]any{"replicas": int64(0)},
			"workerGroupSpecs": []any{map[string]any{"groupName": "cpu", "replicas": int64(0)}, map[string]any{"groupName": "gpu", "replicas": int64(3)}},
		},
	}}
	cs, err := in.Components(copyOnMember2)
	if err != nil || len(cs) != 3 || !cs[2].Divisible {
		t.Fatalf("components %+v, %v", cs, err)
	}
	names, of, ok := in.PodComponents(copyOnMember2)
	if !ok {
		t.Fatal("the pods of a RayCluster are not told apart under the customization")
	}
	t0 := time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)
	pending := func(group string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ray.io/cluster": "train", "ray.io/node-type": "worker", "ray.io/group": group}},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.NewTime(t0)}}}}
	}
	got := unschedulableComponents([]*corev1.Pod{pending("gpu"), pending("gpu")}, names, of)
	if want := []workv1alpha1.UnschedulableComponent{{Name: "gpu", Replicas: 2, Since: metav1.NewTime(t0)}}; !sameComponents(got, want) {
		t.Errorf("member2's Pending pods by component %+v, want %+v", got, want)
	}

	// Each cluster's copy reports its own; the hub sums them.
	ref := workv1alpha1.ObjectReference{APIVersion: "ray.io/v1", Kind: "RayCluster", Namespace: "shop", Name: "train"}
	rayWork := func(cluster, status string) workv1alpha1.Work {
		w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-" + cluster, Name: "shop.train-raycluster",
			Labels: map[string]string{workv1alpha1.LabelCluster: cluster}}}
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Identifier: workv1alpha1.ResourceIdentifier{Group: "ray.io", Version: "v1", Kind: "RayCluster",
			Namespace: "shop", Name: "train"}, Status: raw(status), Health: unknown}}
		return w
	}
	items := aggregate(nil, []workv1alpha1.Work{
		rayWork("member1", `{"readyWorkerReplicas":4,"desiredWorkerReplicas":4}`), // the head cluster
		rayWork("member2", `{"readyWorkerReplicas":1,"desiredWorkerReplicas":3}`),
		rayWork("member3", `{"desiredWorkerReplicas":2}`),
	}, ref, metav1.NewTime(t0))
	if len(items) != 3 {
		t.Fatalf("items %+v", items)
	}
	sums, ok := in.AggregateStatus(schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}, items)
	if !ok || sums["readyWorkerReplicas"] != int64(5) || sums["desiredWorkerReplicas"] != int64(9) {
		t.Errorf("sums %v, want 5 ready of 9 desired workers", sums)
	}
}
