package install

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// testBindingsAreShepherds: with config/default installed and the
// controller manager writing bindings under its own identity (the
// surrounding test fails on any request it was refused), a tenant who may
// patch the namespace's bindings, as `shepherd rollout approve` needs,
// can change the user controls it holds the verbs for and nothing else:
// not the resource a binding places (a redirected binding sent another
// object's content to the members), not its clusters or placement, and no
// approval in someone else's name. Nobody but Shepherd creates a binding.
func testBindingsAreShepherds(t *testing.T) {
	ctx := context.Background()
	// dev: patch on bindings, and approve on their rollout; dev-viewer:
	// patch only (the tenant role of the first tenancy round).
	apply(t, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: binding-approver, namespace: %[1]s}
rules:
- apiGroups: [work.shepherd.io]
  resources: [resourcebindings]
  verbs: [get, list, watch, patch, create]
- apiGroups: [work.shepherd.io]
  resources: [resourcebindings/rollout]
  verbs: [approve]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dev, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: binding-approver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: dev}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: binding-patcher, namespace: %[1]s}
rules:
- apiGroups: [work.shepherd.io]
  resources: [resourcebindings]
  verbs: [get, list, watch, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dev2, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: binding-patcher}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: dev2}]
`, ns))
	dev, dev2 := as(t, "dev"), as(t, "dev2")
	key := client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", "web")}

	// RBAC lands before the policy's authorizer sees it; wait for a
	// request the role allows.
	eventually(t, "dev may read the binding", func() error {
		return dev.Get(ctx, key, &workv1alpha1.ResourceBinding{})
	})

	patch := func(c client.Client, body string) error {
		b := &workv1alpha1.ResourceBinding{}
		if err := c.Get(ctx, key, b); err != nil {
			t.Fatal(err)
		}
		return c.Patch(ctx, b, client.RawPatch("application/merge-patch+json", []byte(body)), client.DryRunAll)
	}
	for _, tc := range []struct {
		name string
		c    client.Client
		body string
		want string // in the refusal; empty: allowed
	}{
		{name: "redirect spec.resource at a ResourceQuota", c: dev,
			body: `{"spec":{"resource":{"kind":"ResourceQuota","name":"quota"}}}`, want: "spec.resource names the template the binding places and cannot be changed"},
		{name: "redirect spec.resource.uid", c: dev,
			body: `{"spec":{"resource":{"uid":"another"}}}`, want: "only Shepherd changes a binding's spec"},
		{name: "move the clusters", c: dev,
			body: `{"spec":{"clusters":[{"name":"member3","replicas":4}]}}`, want: "only Shepherd changes a binding's spec"},
		{name: "rewrite the placement", c: dev,
			body: `{"spec":{"placement":{"clusterAffinity":{"clusterNames":["member3"]}}}}`, want: "only Shepherd changes a binding's spec"},
		{name: "switch to Overwrite", c: dev,
			body: `{"spec":{"conflictResolution":"Overwrite"}}`, want: "only Shepherd changes a binding's spec"},
		{name: "approve in another's name", c: dev,
			body: `{"spec":{"rolloutControl":{"approvals":[{"revision":"r1","stage":"prod","when":"Before","approvedBy":"platform-lead@corp"}]}}}`,
			want: `approvedBy of a new approval must be the approver's own user name, "dev"`},
		{name: "approve in one's own name", c: dev,
			body: `{"spec":{"rolloutControl":{"approvals":[{"revision":"r1","stage":"prod","when":"Before","approvedBy":"dev"}]}}}`},
		{name: "approve without the approve verb", c: dev2,
			body: `{"spec":{"rolloutControl":{"approvals":[{"revision":"r1","stage":"prod","when":"Before","approvedBy":"dev2"}]}}}`,
			want: "needs the verb approve on resourcebindings/rollout"},
		{name: "pause without the pause verb", c: dev,
			body: `{"spec":{"rolloutControl":{"paused":true}}}`, want: "needs the verb pause on resourcebindings/rollout"},
		{name: "labels are not the spec", c: dev,
			body: `{"metadata":{"labels":{"team":"a"}}}`},
	} {
		err := patch(tc.c, tc.body)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want a refusal with %q, got %v", tc.name, tc.want, err)
		}
	}

	// Nobody but Shepherd creates a binding, not even under the name the
	// detector would give it.
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.BindingName("ConfigMap", "forged")},
		Spec: workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "forged", UID: "u"}}}
	if err := dev.Create(ctx, b, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "bindings are created by Shepherd") {
		t.Errorf("dev created a binding: %v", err)
	}

	// What the CLI and the dashboard write as approvedBy: the caller's
	// user name, as the hub knows it.
	if got, err := actions.SelfUser(ctx, dev); err != nil || got != "dev" {
		t.Errorf("SelfUser as dev: %q, %v", got, err)
	}
	for _, name := range []string{"binding-approver", "binding-patcher"} {
		_ = hub.Delete(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
}

// as is a client of the hub acting as user (the admin impersonating it).
func as(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(fleet.Hub.RestConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := fleetenv.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
