package install

import (
	"reflect"
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

// TestAgentRBACPropagation: the opt-in grants escalate and bind on roles
// and cluster roles, nothing else, to the agent's ServiceAccount.
func TestAgentRBACPropagation(t *testing.T) {
	objs := AgentRBACPropagation()
	if len(objs) != 2 || objs[0].GetKind() != "ClusterRole" || objs[1].GetKind() != "ClusterRoleBinding" {
		t.Fatalf("objects %v, want a ClusterRole then its binding", objs)
	}
	rules, _, _ := unstructured.NestedSlice(objs[0].Object, "rules")
	want := []any{map[string]any{
		"apiGroups": []any{"rbac.authorization.k8s.io"},
		"resources": []any{"roles", "clusterroles"},
		"verbs":     []any{"escalate", "bind"},
	}}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %v, want %v", rules, want)
	}
	subjects, _, _ := unstructured.NestedSlice(objs[1].Object, "subjects")
	if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != AgentDeployment || subjects[0].(map[string]any)["namespace"] != AgentNamespace {
		t.Errorf("subjects %v, want the agent's ServiceAccount", subjects)
	}
	if ref, _, _ := unstructured.NestedString(objs[1].Object, "roleRef", "name"); ref != AgentRBACPropagationRole {
		t.Errorf("roleRef %q", ref)
	}
}
