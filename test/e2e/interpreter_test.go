package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestCustomizedCRDWorkload: a kind Shepherd has no built-in knowledge of
// (the Rollout CRD of examples/interpreter) is taught by one
// ResourceInterpreterCustomization: its replicas are divided over two
// members, the members' ready counters add up on the hub's template, and a
// member reporting it Degraded fails it over to the other member. A
// customization that does not compile is refused.
func TestCustomizedCRDWorkload(t *testing.T) {
	const ns = "rollouts-demo"
	ctx := context.Background()
	crd := decodeOne(t, readExample(t, "interpreter", "rollout-crd.yaml"))
	// The members' admins install the CRD (the example's
	// ClusterPropagationPolicy would do it too; here the members have it
	// before the Rollout arrives).
	for _, c := range append([]client.Client{hub}, memberCl["member1"], memberCl["member2"]) {
		if err := c.Create(ctx, crd.DeepCopy()); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]client.Client{"hub": hub, "member1": memberCl["member1"], "member2": memberCl["member2"]} {
		eventually(t, "the CRD established in "+name, func() error {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(crd.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, got); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("not established yet")
		})
	}
	// The hub schedules on what members report: wait until both list the
	// kind, as a platform team checks before rolling a new CRD out.
	for _, m := range []string{"member1", "member2"} {
		eventually(t, m+" reports the Rollout API", func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: m}, c); err != nil {
				return err
			}
			for _, e := range c.Status.APIEnablements {
				if e.GroupVersion != "apps.example.com/v1alpha1" {
					continue
				}
				for _, r := range e.Resources {
					if r.Kind == "Rollout" {
						return nil
					}
				}
			}
			return fmt.Errorf("no apps.example.com/v1alpha1 Rollout among its APIs")
		})
	}
	// A broken customization is refused; the example is accepted.
	refused := decodeOne(t, readExample(t, "interpreter", "rollout-customization-refused.yaml"))
	if err := hub.Create(ctx, refused); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.customizations.replicas.expression") {
		t.Fatalf("a customization that does not compile: want Invalid naming the field, got %v", err)
	}
	// The Rollout is propagated before Shepherd knows the kind: it has no
	// replicas then, and goes whole to both members. The customization
	// makes the detector interpret it again, and it is divided.
	eventuallyApplied(t, readExample(t, "interpreter", "rollout.yaml"))
	eventually(t, "the Rollout bound before the customization", func() error {
		rb, err := binding(ns, "checkout", "Rollout")
		if err != nil {
			return err
		}
		if rb.Spec.Replicas != 0 {
			return fmt.Errorf("replicas %d before the customization", rb.Spec.Replicas)
		}
		return nil
	})
	customization := readExample(t, "interpreter", "rollout-customization.yaml")
	applyYAML(t, customization[:strings.Index(customization, "---\n# The Rollout CRD itself")])

	key := client.ObjectKey{Namespace: ns, Name: "checkout"}
	rollout := func(cluster string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps.example.com/v1alpha1")
		u.SetKind("Rollout")
		return u, memberCl[cluster].Get(ctx, key, u)
	}
	replicasIn := func(cluster string) (int64, error) {
		u, err := rollout(cluster)
		if err != nil {
			return 0, err
		}
		n, _, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n, err
	}
	eventually(t, "the Rollout divided 2 + 2", func() error {
		for _, m := range []string{"member1", "member2"} {
			if n, err := replicasIn(m); err != nil || n != 2 {
				rb, berr := binding(ns, "checkout", "Rollout")
				if berr != nil {
					var events eventsv1.EventList
					_ = hub.List(ctx, &events, client.InNamespace(ns))
					var notes []string
					for _, e := range events.Items {
						notes = append(notes, e.Reason+": "+e.Note)
					}
					return fmt.Errorf("%s: %d replicas, %v; binding: %v; events: %v", m, n, err, berr, notes)
				}
				return fmt.Errorf("%s: %d replicas, %v; binding replicas %d, targets %v, conditions %+v, aggregated %+v", m, n, err,
					rb.Spec.Replicas, rb.Spec.Clusters, rb.Status.Conditions, rb.Status.AggregatedStatus)
			}
		}
		return nil
	})
	// The members' Rollout controller (played by the test) reports.
	report := func(cluster, phase string, ready int64) {
		t.Helper()
		// Shepherd may be applying the Rollout at the same moment: read and
		// write again on a conflict, as a controller does.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u, err := rollout(cluster)
			if err != nil {
				return err
			}
			_ = unstructured.SetNestedField(u.Object, map[string]any{"phase": phase, "readyReplicas": ready, "updatedReplicas": ready,
				"observedGeneration": u.GetGeneration()}, "status")
			return memberCl[cluster].Status().Update(ctx, u)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	report("member1", "Healthy", 2)
	report("member2", "Healthy", 1)
	eventually(t, "readyReplicas summed on the hub's template", func() error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps.example.com/v1alpha1")
		u.SetKind("Rollout")
		if err := hub.Get(ctx, key, u); err != nil {
			return err
		}
		if n, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); n != 3 {
			return fmt.Errorf("hub status %v", u.Object["status"])
		}
		return nil
	})
	waitHealthyOn(t, ns, "checkout", "Rollout", "member1")

	// member1 reports the Rollout Degraded: after the 3 s toleration it
	// moves, and member2 runs all 4 replicas.
	report("member1", "Degraded", 0)
	waitEvicted(t, ns, "checkout", "Rollout", "member1")
	eventually(t, "member2 runs all 4 replicas", func() error {
		if n, err := replicasIn("member2"); err != nil || n != 4 {
			return fmt.Errorf("member2: %d replicas, %v", n, err)
		}
		return nil
	})
}

// decodeOne decodes a YAML document holding one object.
func decodeOne(t *testing.T, yaml string) *unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeYAML([]byte(yaml))
	if err != nil || len(objs) != 1 {
		t.Fatalf("decoding: %d objects, %v", len(objs), err)
	}
	return objs[0]
}

// eventuallyApplied applies YAML whose kinds a just-created CRD defines,
// retrying while the hub does not serve them yet.
func eventuallyApplied(t *testing.T, yaml string) {
	t.Helper()
	eventually(t, "applied", func() error {
		objs, err := testenv.DecodeYAML([]byte(yaml))
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := hub.Patch(context.Background(), o, client.Apply, client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
				return err
			}
		}
		return nil
	})
}
