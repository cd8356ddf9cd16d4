package install

import (
	"testing"

	"github.com/shepherd-io/shepherd/config"
)

// TestIdentityManifests: what `shepherd up` applies to run the controller
// manager under its ServiceAccount is config/default's namespace and the
// identity kustomizations, and nothing that runs or admits anything.
func TestIdentityManifests(t *testing.T) {
	objs, err := IdentityManifests()
	if err != nil {
		t.Fatal(err)
	}
	if k := objs[0].GetKind(); k != "Namespace" || objs[0].GetName() != Namespace {
		t.Errorf("first object is %s, want Namespace %s", describe(objs[0]), Namespace)
	}
	all := manifests(t, "")
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if find(all, o.GetKind(), o.GetNamespace(), o.GetName()) == nil {
			t.Errorf("%s is not part of config/%s", describe(o), config.DefaultKustomization)
		}
	}
	for _, want := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "PriorityLevelConfiguration", "FlowSchema"} {
		if kinds[want] == 0 {
			t.Errorf("no %s among %v", want, kinds)
		}
	}
	for _, never := range []string{"Deployment", "CustomResourceDefinition", "ValidatingWebhookConfiguration", "Service"} {
		if kinds[never] > 0 {
			t.Errorf("%d %s: the identity runs and admits nothing", kinds[never], never)
		}
	}
	if sa := find(objs, "ServiceAccount", Namespace, Deployment); sa == nil {
		t.Errorf("no ServiceAccount %s/%s, the user %s", Namespace, Deployment, ServiceAccountUser)
	}
}
