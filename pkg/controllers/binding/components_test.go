package binding_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// readExample reads a file of examples/interpreter.
func readExample(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "interpreter", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// poolCluster registers a ready cluster serving WorkerPools, with nodes
// of the cores given (32Gi each), for the test alone: the other tests
// count the fleet's clusters.
func poolCluster(t *testing.T, name string, cores ...string) {
	t.Helper()
	ctx := context.Background()
	if err := createCluster(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := &clusterv1alpha1.Cluster{}
		c.Name = name
		remove(t, c)
		waitGone(t, c)
	})
	eventually(t, "room of "+name, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := cli.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		c.Status.APIEnablements = append(c.Status.APIEnablements, clusterv1alpha1.APIEnablement{GroupVersion: "pools.example.com/v1",
			Resources: []clusterv1alpha1.APIResource{{Name: "workerpools", Kind: "WorkerPool"}}})
		rs := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}}
		for _, n := range cores {
			free := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
			rs.Nodes = append(rs.Nodes, clusterv1alpha1.NodeGroup{Count: 1, Free: free})
			for k, v := range free {
				sum := rs.Allocatable[k]
				sum.Add(v)
				rs.Allocatable[k] = sum
			}
		}
		c.Status.ResourceSummary = rs
		return cli.Status().Update(ctx, c)
	})
}

// TestDividedComponents follows a WorkerPool (the CRD and customization of
// examples/interpreter) whose policy divides its components, on a real
// hub: the binding carries each component's divisible flag and
// replicasPath as the customization's rule gives them, the coordinator
// goes whole to one cluster, the ten workers are divided over the others
// by room node by node, and each cluster's Work holds a copy running its
// share, 0 of the rest. Scaling the workers up places the new ones by
// room, the others stay.
func TestDividedComponents(t *testing.T) {
	suite.Hub(t)
	const ns = "divided-components"
	ctx := context.Background()

	// The process's interpreter learns the kind, as the customization
	// controller teaches it from the object.
	ric := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := yaml.UnmarshalStrict([]byte(readExample(t, "workerpool-customization.yaml")), ric); err != nil {
		t.Fatal(err)
	}
	compiled, errs := interpreter.CompileCustomization(ric)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	kinds.SetCustom(compiled.GVK, compiled.Custom)
	t.Cleanup(func() { kinds.ClearCustom(compiled.GVK) })
	apply(t, readExample(t, "workerpool-crd.yaml"))

	// g1 holds the 2-core coordinator (first by name among equals) and
	// three 2-core workers beside it on its two 4-core nodes; g2's one
	// 8-core node holds four workers, g3's three 4-core nodes six.
	poolCluster(t, "g1", "4", "4")
	poolCluster(t, "g2", "8")
	poolCluster(t, "g3", "4", "4", "4")
	namespace(t, ns)
	pool := func(workers int) string {
		return fmt.Sprintf(`
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: render, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: pools.example.com/v1, kind: WorkerPool, name: render}]
  placement:
    clusterAffinity: {clusterNames: [g1, g2, g3]}
    components: {division: DivideIndependent}
---
apiVersion: pools.example.com/v1
kind: WorkerPool
metadata: {name: render, namespace: %[1]s}
spec:
  coordinator:
    replicas: 1
    template: {spec: {containers: [{name: coordinator, image: busybox:1.36, resources: {requests: {cpu: "2", memory: 2Gi}}}]}}
  workerGroups:
  - name: render
    replicas: %[2]d
    template: {spec: {containers: [{name: worker, image: busybox:1.36, resources: {requests: {cpu: "2", memory: 4Gi}}}]}}
`, ns, workers)
	}
	// The API serves the kind once the CRD is established.
	eventually(t, "the WorkerPool applied", func() error {
		_, err := hub.Apply(ctx, []byte(pool(10)))
		return err
	})

	type share struct{ coordinator, render int64 }
	want := func(shares map[string]share) func(b *workv1alpha1.ResourceBinding) error {
		return func(b *workv1alpha1.ResourceBinding) error {
			if b.Spec.DividedComponents == nil || b.Spec.DividedComponents.HeadCluster != "g1" {
				return fmt.Errorf("division %+v, want the head on g1", b.Spec.DividedComponents)
			}
			got := map[string]share{}
			for _, tc := range b.Spec.Clusters {
				var s share
				for _, c := range tc.Components {
					switch c.Name {
					case "coordinator":
						s.coordinator = int64(c.Replicas)
					case "render":
						s.render = int64(c.Replicas)
					}
				}
				got[tc.Name] = s
			}
			if !reflect.DeepEqual(got, shares) {
				return fmt.Errorf("shares %+v, want %+v", got, shares)
			}
			return nil
		}
	}
	first := map[string]share{"g1": {coordinator: 1}, "g2": {render: 4}, "g3": {render: 6}}
	rb := waitScheduled(t, ns, "render-workerpool", want(first))
	wantComponents := []workv1alpha1.Component{
		{Name: "coordinator", Replicas: 1, ReplicasPath: "/spec/coordinator/replicas"},
		{Name: "render", Replicas: 10, Divisible: true, ReplicasPath: "/spec/workerGroups/0/replicas"},
	}
	for i, c := range rb.Spec.Components {
		c.ReplicaRequirements = nil
		if i >= len(wantComponents) || !reflect.DeepEqual(c, wantComponents[i]) {
			t.Errorf("binding components %+v, want %+v", rb.Spec.Components, wantComponents)
		}
	}

	// Each cluster's copy runs its share, 0 of the rest.
	copies := func(shares map[string]share) {
		t.Helper()
		clusters := []string{}
		for _, c := range []string{"g1", "g2", "g3"} {
			if _, ok := shares[c]; ok {
				clusters = append(clusters, c)
			}
		}
		waitWorks(t, rbRef(ns, rb.Name), clusters, func(cluster string, m *unstructured.Unstructured) error {
			coordinator, _, _ := unstructured.NestedInt64(m.Object, "spec", "coordinator", "replicas")
			groups, _, _ := unstructured.NestedSlice(m.Object, "spec", "workerGroups")
			if len(groups) != 1 {
				return fmt.Errorf("worker groups %v", groups)
			}
			render, _, _ := unstructured.NestedInt64(groups[0].(map[string]any), "replicas")
			if got := (share{coordinator, render}); got != shares[cluster] {
				return fmt.Errorf("copy runs %+v, want %+v", got, shares[cluster])
			}
			if name, _, _ := unstructured.NestedString(groups[0].(map[string]any), "name"); name != "render" {
				return fmt.Errorf("the group's other fields changed: %v", groups[0])
			}
			return nil
		})
	}
	copies(first)

	// Two more workers: the ten placed stay where they run, the new ones
	// go where there is room (beside the coordinator on g1).
	if _, err := hub.Apply(ctx, []byte(pool(12))); err != nil {
		t.Fatal(err)
	}
	scaled := map[string]share{"g1": {coordinator: 1, render: 2}, "g2": {render: 4}, "g3": {render: 6}}
	waitScheduled(t, ns, "render-workerpool", func(b *workv1alpha1.ResourceBinding) error {
		if len(b.Spec.Components) != 2 || b.Spec.Components[1].Replicas != 12 {
			return fmt.Errorf("components %+v", b.Spec.Components)
		}
		return want(scaled)(b)
	})
	copies(scaled)

	// The template on the hub keeps what its user wrote.
	tmpl := &unstructured.Unstructured{}
	tmpl.SetAPIVersion("pools.example.com/v1")
	tmpl.SetKind("WorkerPool")
	if err := cli.Get(ctx, client.ObjectKey{Namespace: ns, Name: "render"}, tmpl); err != nil {
		t.Fatal(err)
	}
	coordinator, _, _ := unstructured.NestedInt64(tmpl.Object, "spec", "coordinator", "replicas")
	groups, _, _ := unstructured.NestedSlice(tmpl.Object, "spec", "workerGroups")
	if render, _, _ := unstructured.NestedInt64(groups[0].(map[string]any), "replicas"); coordinator != 1 || render != 12 {
		t.Errorf("the template changed: coordinator %d, workers %d", coordinator, render)
	}

	// The template gone, its binding goes (before its clusters do).
	remove(t, tmpl)
	waitGone(t, rb)
}
