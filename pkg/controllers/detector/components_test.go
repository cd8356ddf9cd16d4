package detector

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	corev1 "k8s.io/api/core/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// rayTemplate is a RayCluster with a head asking for headCPU and one
// worker group "workers" of replicas pods asking for 4 cpu and 8Gi.
func rayTemplate(headCPU string, replicas int64) *unstructured.Unstructured {
	pod := func(cpu, mem string) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "ray",
			"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": mem}}}}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1",
		"kind":       "RayCluster",
		"metadata":   map[string]any{"namespace": "ns", "name": "train", "uid": "u3", "resourceVersion": "9"},
		"spec": map[string]any{
			"headGroupSpec":    map[string]any{"template": pod(headCPU, "4Gi")},
			"workerGroupSpecs": []any{map[string]any{"groupName": "workers", "replicas": replicas, "template": pod("4", "8Gi")}},
		},
	}}
}

// TestDesiredBindingComponents: the detector writes the components the
// interpreter reads into spec.components, in its order, each with one
// pod's request; a kind without components gets no field at all.
func TestDesiredBindingComponents(t *testing.T) {
	b, err := desiredBinding(interpreter.New(), rayTemplate("2", 4), true, dividedPolicy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	request := func(cpu, mem string) *workv1alpha1.ComponentReplicaRequirements {
		return &workv1alpha1.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	want := []workv1alpha1.Component{
		{Name: "ray-head", Replicas: 1, ReplicaRequirements: request("2", "4Gi")},
		{Name: "workers", Replicas: 4, ReplicaRequirements: request("4", "8Gi")},
	}
	spec := b.GetBindingSpec()
	if !equality.Semantic.DeepEqual(spec.Components, want) {
		t.Errorf("components %+v, want %+v", spec.Components, want)
	}
	if spec.Replicas != 0 || spec.ReplicaRequirements != nil {
		t.Errorf("a gang has no replicas of its own: %d, %+v", spec.Replicas, spec.ReplicaRequirements)
	}

	plain, err := desiredBinding(interpreter.New(), deploymentTemplate(6), true, dividedPolicy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := plain.GetBindingSpec().Components; c != nil {
		t.Errorf("a Deployment's binding has components %+v", c)
	}
	if u, err := applyObject(plain); err != nil {
		t.Fatal(err)
	} else if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "components"); found {
		t.Error("a Deployment's binding applies spec.components")
	}
}

// TestComponentsChangeIsWritten: scaling a worker group changes a field
// the detector owns, so the binding is written again.
func TestComponentsChangeIsWritten(t *testing.T) {
	before, err := desiredBinding(interpreter.New(), rayTemplate("2", 4), true, dividedPolicy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := desiredBinding(interpreter.New(), rayTemplate("2", 4), true, dividedPolicy(), nil)
	scaled, _ := desiredBinding(interpreter.New(), rayTemplate("2", 6), true, dividedPolicy(), nil)
	if !ownedFieldsEqual(before, same) {
		t.Error("the same template must need no write")
	}
	if ownedFieldsEqual(before, scaled) {
		t.Error("a worker group scaled from 4 to 6 must be written")
	}
}

// TestComponentsErrorIsReported: a template whose components cannot be
// read fails like one whose replicas cannot: no binding, and an error
// naming the template and the field.
func TestComponentsErrorIsReported(t *testing.T) {
	tmpl := rayTemplate("2", 4)
	unstructured.RemoveNestedField(tmpl.Object, "spec", "headGroupSpec")
	b, err := desiredBinding(interpreter.New(), tmpl, true, dividedPolicy(), nil)
	if err == nil || b != nil {
		t.Fatalf("got %v, %v; want an error and no binding", b, err)
	}
	for _, want := range []string{"RayCluster ns/train", "headGroupSpec"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
