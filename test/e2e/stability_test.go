package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// availableIn checks a member runs the Deployment with replicas available.
func availableIn(cluster string, key client.ObjectKey, replicas int32) error {
	d := &appsv1.Deployment{}
	if err := inMember(cluster, key, d); err != nil {
		return err
	}
	if d.Status.AvailableReplicas != replicas {
		return fmt.Errorf("%d of %d available in %s", d.Status.AvailableReplicas, replicas, cluster)
	}
	return nil
}

// TestTemplateEditKeepsPlacement: in a real fleet, an image edit reaches
// the members in place (same objects) and schedules nothing (see
// docs/stability.md; the other rows run in pkg/controllers/reschedule).
func TestTemplateEditKeepsPlacement(t *testing.T) {
	const ns = "e2e-stability"
	createNamespace(t, ns)
	key := client.ObjectKey{Namespace: ns, Name: "edit"}
	applyYAML(t, policyYAML(ns, "edit", "Deployment", "edit", dividedOverThree)+"---\n"+deploymentYAML(ns, "edit", 3))
	before := waitPlaced(t, ns, "edit", "Deployment", func(got map[string]int32) error {
		if sum(got) != 3 || len(got) != 3 {
			return fmt.Errorf("targets %v", got)
		}
		return nil
	})
	uids := map[string]string{}
	for _, c := range members {
		eventually(t, "edit available in "+c, func() error { return availableIn(c, key, 1) })
		uids[c] = string(memberDeploymentUID(t, c, key))
	}

	dep := &appsv1.Deployment{}
	if err := hub.Get(context.Background(), key, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	if err := hub.Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	for _, c := range members {
		eventually(t, "new image in "+c, func() error {
			d := &appsv1.Deployment{}
			if err := inMember(c, key, d); err != nil {
				return err
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" {
				return fmt.Errorf("image %s", img)
			}
			if string(d.UID) != uids[c] {
				return fmt.Errorf("re-created: UID %s -> %s", uids[c], d.UID)
			}
			return nil
		})
	}
	time.Sleep(2 * time.Second)
	after, err := binding(ns, "edit", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	if !after.Status.LastScheduledTime.Equal(before.Status.LastScheduledTime) || fmt.Sprint(targets(after)) != fmt.Sprint(targets(before)) {
		t.Errorf("the image edit rescheduled: %v at %v -> %v at %v", targets(before), before.Status.LastScheduledTime, targets(after), after.Status.LastScheduledTime)
	}
}
