package binding_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
)

// These tests check when the scheduler places a binding again, and when
// it does not.

// TestTemplateEditDoesNotReschedule: editing the image updates the Works
// but is no scheduling input, and once settled nobody writes the binding.
func TestTemplateEditDoesNotReschedule(t *testing.T) {
	suite.Hub(t)
	const ns = "edit"
	namespace(t, ns)
	apply(t, dividedPolicyYAML(ns, "c1", "c2")+"---"+deploymentYAML(ns, 4, "nginx:1.27"))
	rb := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		if sum(activeTargets(b)) != 4 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	ref := rbRef(ns, rb.Name)
	waitWorks(t, ref, []string{"c1", "c2"}, func(string, *unstructured.Unstructured) error { return nil })
	scheduledAt := rb.Status.LastScheduledTime
	hash := rb.Annotations[workv1alpha1.AnnotationScheduledHash]

	updates := watchBinding(t, ns, rb.Name, rb.ResourceVersion)
	apply(t, deploymentYAML(ns, 4, "nginx:1.28"))
	dep := &appsv1.Deployment{}
	if err := cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	waitWorks(t, ref, []string{"c1", "c2"}, func(_ string, m *unstructured.Unstructured) error {
		cs, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
		if len(cs) != 1 || cs[0].(map[string]any)["image"] != "nginx:1.28" {
			return fmt.Errorf("containers %v", cs)
		}
		return nil
	})
	rb, err := getRB(ns, rb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Spec.Resource.ResourceVersion != dep.ResourceVersion {
		t.Errorf("binding names template version %s, template is at %s", rb.Spec.Resource.ResourceVersion, dep.ResourceVersion)
	}
	if !rb.Status.LastScheduledTime.Equal(scheduledAt) || rb.Annotations[workv1alpha1.AnnotationScheduledHash] != hash {
		t.Errorf("the image edit rescheduled: lastScheduledTime %v -> %v", scheduledAt, rb.Status.LastScheduledTime)
	}

	// Settled: over the next seconds nobody writes the binding (no
	// controller loops on another's or its own writes).
	time.Sleep(time.Second)
	during := updates.count()
	time.Sleep(3 * time.Second)
	if after := updates.count(); after != during {
		t.Errorf("binding written %d times while nothing changed", after-during)
	}
	if during > 4 {
		t.Errorf("an image edit caused %d binding writes", during)
	}
}

// TestEverywherePlacementFollowsTheFleet: a placement taking every
// eligible cluster gains a cluster that becomes eligible without moving
// the others, and loses one that leaves the fleet.
func TestEverywherePlacementFollowsTheFleet(t *testing.T) {
	suite.Hub(t)
	const ns = "everywhere"
	namespace(t, ns)
	apply(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: shared, namespace: everywhere}
data: {k: v}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everywhere, namespace: everywhere}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {tier: edge}}}}
`)
	// No cluster is labelled yet: unschedulable.
	eventually(t, "unschedulable without edge clusters", func() error {
		b, err := getRB(ns, "shared-configmap")
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha1.ConditionScheduled); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	addEdge := func(name string) {
		t.Helper()
		eventually(t, "labelling "+name, func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := cli.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
				return err
			}
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			c.Labels["tier"] = "edge"
			return cli.Update(context.Background(), c)
		})
	}
	addEdge("c1")
	rb := waitScheduled(t, ns, "shared-configmap", func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); !maps.Equal(got, map[string]int32{"c1": 0}) {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	scheduledAt := rb.Status.LastScheduledTime

	// A new cluster joins, already eligible: it is added, c1 stays.
	if err := createCluster(context.Background(), "c4", map[string]string{"tier": "edge"}); err != nil {
		t.Fatal(err)
	}
	rb = waitScheduled(t, ns, rb.Name, func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); !maps.Equal(got, map[string]int32{"c1": 0, "c4": 0}) {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	if rb.Status.LastScheduledTime.Before(scheduledAt) {
		t.Errorf("lastScheduledTime went back: %v -> %v", scheduledAt, rb.Status.LastScheduledTime)
	}
	waitWorks(t, rbRef(ns, rb.Name), []string{"c1", "c4"}, func(string, *unstructured.Unstructured) error { return nil })

	// c4 leaves the fleet: its target goes, and so does its Work.
	remove(t, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c4"}})
	waitScheduled(t, ns, rb.Name, func(b *workv1alpha1.ResourceBinding) error {
		if got := activeTargets(b); !maps.Equal(got, map[string]int32{"c1": 0}) || len(b.Spec.Clusters) != 1 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	waitWorks(t, rbRef(ns, rb.Name), []string{"c1"}, func(string, *unstructured.Unstructured) error { return nil })
}

// TestRescheduleRequest: spec.rescheduleTriggeredAt later than the last
// scheduling makes the scheduler place the binding again.
func TestRescheduleRequest(t *testing.T) {
	suite.Hub(t)
	const ns = "reschedule"
	namespace(t, ns)
	apply(t, dividedPolicyYAML(ns, "c1", "c2")+"---"+deploymentYAML(ns, 2, "nginx:1.27"))
	rb := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
		if sum(activeTargets(b)) != 2 {
			return fmt.Errorf("targets %v", b.Spec.Clusters)
		}
		return nil
	})
	requested := metav1.NewTime(rb.Status.LastScheduledTime.Add(time.Second))
	patch := fmt.Sprintf(`{"spec":{"rescheduleTriggeredAt":%q}}`, requested.UTC().Format(time.RFC3339))
	if err := cli.Patch(context.Background(), rb, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	waitScheduled(t, ns, rb.Name, func(b *workv1alpha1.ResourceBinding) error {
		if b.Status.LastScheduledTime.Before(&requested) {
			return fmt.Errorf("last scheduled at %v, reschedule requested at %v", b.Status.LastScheduledTime, requested)
		}
		return nil
	})
	eventually(t, "Scheduled event of the reschedule", func() error {
		list := &eventsv1.EventList{}
		if err := cli.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == scheduling.EventScheduled && strings.Contains(e.Note, string(scheduling.TriggerReschedule)) {
				return nil
			}
		}
		return fmt.Errorf("no Scheduled (%s) event among %d", scheduling.TriggerReschedule, len(list.Items))
	})
}

// bindingWatch counts the modifications of one binding.
type bindingWatch struct{ n atomic.Int64 }

func (w *bindingWatch) count() int64 { return w.n.Load() }

// watchBinding counts updates of a ResourceBinding from resourceVersion
// on, until the test ends.
func watchBinding(t *testing.T, ns, name, resourceVersion string) *bindingWatch {
	t.Helper()
	wi, err := cli.Watch(context.Background(), &workv1alpha1.ResourceBindingList{},
		client.InNamespace(ns), client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: resourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wi.Stop)
	w := &bindingWatch{}
	go func() {
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Modified {
				w.n.Add(1)
			}
		}
	}()
	return w
}
