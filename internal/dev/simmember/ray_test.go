package simmember_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/test/testenv"
)

const rayClusterYAML = `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train, namespace: ml}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray, resources: {requests: {cpu: "1", memory: 1Gi}}}]
  workerGroupSpecs:
  - groupName: workers
    replicas: 3
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray, resources: {requests: {cpu: "2", memory: 2Gi}}}]
`

// TestRayOperator: a member with the simulated Ray operator serves
// RayClusters and runs a RayCluster's head and workers as pods the
// scheduler binds and kwok runs; scaling a worker group down deletes the
// surplus workers, a pod deleted by hand comes back, and deleting the
// RayCluster deletes its pods (the garbage collector, by their owner).
func TestRayOperator(t *testing.T) {
	testenv.Heavy(t)
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := simmember.Start(ctx, simmember.Options{
		MemberSpec:  simmember.DefaultMemberSpec("ray"),
		DataDir:     filepath.Join(dataDir, "ray"),
		Logger:      stderrLogger().WithName("member"),
		RayOperator: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Runs before t.TempDir's removal: etcd must be closed by then.
	t.Cleanup(func() {
		cancel()
		_ = m.Wait()
	})
	c := clientFor(t, m)
	createNamespace(t, c, "ml")
	rcs := dynamic.NewForConfigOrDie(m.RestConfig()).Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}).Namespace("ml")
	rc := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(rayClusterYAML), &rc.Object); err != nil {
		t.Fatal(err)
	}
	if rc, err = rcs.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the RayCluster: %v", err)
	}

	// running waits until train's pods are exactly want (name -> ray.io/group),
	// none being deleted, each bound to a node, Running and controlled by
	// train, and returns their UIDs by name.
	running := func(what string, want map[string]string) map[string]types.UID {
		t.Helper()
		uids := map[string]types.UID{}
		testenv.Eventually(t, time.Minute, what, func() error {
			pods, err := c.CoreV1().Pods("ml").List(ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=train"})
			if err != nil {
				return err
			}
			got := map[string]string{}
			for _, p := range pods.Items {
				got[p.Name] = p.Labels["ray.io/group"]
				ref := metav1.GetControllerOf(&p)
				switch {
				case p.DeletionTimestamp != nil:
					return fmt.Errorf("pod %s is being deleted", p.Name)
				case p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning:
					return fmt.Errorf("pod %s on node %q, %s", p.Name, p.Spec.NodeName, p.Status.Phase)
				case ref == nil || ref.UID != rc.GetUID():
					return fmt.Errorf("pod %s is controlled by %+v, not the RayCluster", p.Name, ref)
				}
				uids[p.Name] = p.UID
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("pods %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			return nil
		})
		return uids
	}
	head := map[string]string{"train-head": "headgroup"}
	three := maps.Clone(head)
	for i := range 3 {
		three[fmt.Sprintf("train-workers-worker-%d", i)] = "workers"
	}
	running("the head and three workers run", three)

	scale := []byte(`[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 1}]`)
	if _, err := rcs.Patch(ctx, "train", types.JSONPatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	one := maps.Clone(head)
	one["train-workers-worker-0"] = "workers"
	before := running("scaled to one worker, the surplus deleted", one)

	if err := c.CoreV1().Pods("ml").Delete(ctx, "train-head", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := running("the head deleted by hand runs again", one); after["train-head"] == before["train-head"] {
		t.Errorf("the head running is the one deleted (%s)", before["train-head"])
	}

	if err := rcs.Delete(ctx, "train", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the RayCluster's pods are deleted with it", func() error {
		pods, err := c.CoreV1().Pods("ml").List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left (%v)", len(pods.Items), err)
		}
		return nil
	})
}
