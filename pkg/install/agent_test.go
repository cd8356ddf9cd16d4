package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAgentManifests(t *testing.T) {
	objs, err := AgentManifests("edge-1", "registry.example.com/shepherd:v1", []byte("hub-kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].GetKind() != "Namespace" || objs[0].GetName() != AgentNamespace {
		t.Fatalf("first object %s %s, want the namespace", objs[0].GetKind(), objs[0].GetName())
	}
	d := find(objs, "Deployment", AgentNamespace, AgentDeployment)
	if d == nil {
		t.Fatal("no agent Deployment")
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != "registry.example.com/shepherd:v1" {
		t.Errorf("image %v", img)
	}
	s := find(objs, "Secret", AgentNamespace, AgentHubSecret)
	if s == nil {
		t.Fatal("no hub kubeconfig Secret")
	}
	if data, _, _ := unstructured.NestedString(s.Object, "data", "kubeconfig"); data != "aHViLWt1YmVjb25maWc=" {
		t.Errorf("Secret data %q", data)
	}
	cm := find(objs, "ConfigMap", AgentNamespace, AgentConfigMap)
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "cluster"); v != "edge-1" {
		t.Errorf("ConfigMap cluster %q", v)
	}
	if _, err := AgentManifests("edge-1", "not an image!", nil); err == nil {
		t.Error("a bad image was accepted")
	}
}
