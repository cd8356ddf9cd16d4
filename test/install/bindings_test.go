package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

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
- apiGroups: [policy.shepherd.io]
  resources: [overridepolicies]
  verbs: ["*"]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: ["*"]
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

	// Shepherd's own identity creates and changes bindings of both kinds,
	// as the detector does (server-side apply), under the policy.
	sa, err := fleetenv.NewClient(serviceAccountConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []client.Object{
		&workv1alpha1.ResourceBinding{TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.SchemeGroupVersion.String(), Kind: "ResourceBinding"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.BindingName("ConfigMap", "by-shepherd")},
			Spec:       workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "by-shepherd", UID: "u"}}},
		&workv1alpha1.ClusterResourceBinding{TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterResourceBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: names.BindingName("CustomResourceDefinition", "widgets.example.com")},
			Spec:       workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com", UID: "u"}}},
	} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: u}
		unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(obj.Object, "status")
		if err := sa.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(workv1alpha1.FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
			t.Errorf("Shepherd's identity may not create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}

	// What the CLI and the dashboard write as approvedBy: the caller's
	// user name, as the hub knows it.
	if got, err := actions.SelfUser(ctx, dev); err != nil || got != "dev" {
		t.Errorf("SelfUser as dev: %q, %v", got, err)
	}
}

// testOverridePathsInAnyCase: the identity paths the CRDs refuse are
// refused in any other letter case too (/Metadata adds a field no member
// accepts, so every apply of the Work failed), to everyone.
func testOverridePathsInAnyCase(t *testing.T) {
	for _, overriders := range []string{
		`plaintext: [{path: /Metadata, operator: add, value: {name: x}}]`,
		`plaintext: [{path: /KIND, operator: replace, value: ClusterRoleBinding}]`,
		`fieldOverrider: [{fieldPath: /metadata/Namespace, json: [{subPath: /a, operator: remove}]}]`,
		`imageOverrider: [{predicate: {path: /Metadata/Name}, component: Tag, operator: remove}]`,
	} {
		p := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf("apiVersion: policy.shepherd.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: probe, namespace: %s}\nspec:\n  overrideRules:\n  - overriders:\n      %s\n", ns, overriders)), &p.Object); err != nil {
			t.Fatal(err)
		}
		err := hub.Create(context.Background(), p, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "may not touch what the object is") || !strings.Contains(err.Error(), "in any letter case") {
			t.Errorf("%s: want refused, got %v", overriders, err)
		}
	}
}

// testOverrideOperationsBound: a policy of more operations than an
// override policy may hold is refused, naming its count and the limit.
func testOverrideOperationsBound(t *testing.T) {
	ops := strings.Repeat("{path: /data/k, operator: add, value: v}, ", 70)
	p := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf("apiVersion: policy.shepherd.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: probe, namespace: %s}\nspec:\n  overrideRules:\n  - overriders: {plaintext: [%[2]s]}\n  - overriders: {plaintext: [%[2]s]}\n  - overriders: {plaintext: [%[2]s]}\n", ns, ops[:len(ops)-2])), &p.Object); err != nil {
		t.Fatal(err)
	}
	err := hub.Create(context.Background(), p, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "spec.overrideRules hold 210 operations, more than the 200 an override policy may hold") {
		t.Errorf("210 operations: want refused, got %v", err)
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

// testRBACOverrides: an override policy that changes what an RBAC object
// grants needs the rights the hub asks of whoever writes such an object
// (escalate and bind on roles and clusterroles in the policy's
// namespace). dev2 may write roles and override policies in the namespace
// but holds neither verb: it is refused the overrides of the probe
// (a Role's rules made "*", a RoleBinding's roleRef made cluster-admin,
// a ClusterRole aggregated into admin), and may still override anything
// else. An administrator may do all of it.
func testRBACOverrides(t *testing.T) {
	ctx := context.Background()
	dev2 := as(t, "dev2")
	policy := func(selector, overriders string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: probe, namespace: %s}
spec:
  %s
  overrideRules:
  - overriders:
      %s
`, ns, selector, overriders)), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	const role = `resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: Role}]`
	const binding = `resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding}]`
	const configMap = `resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]`
	for _, tc := range []struct {
		name       string
		p          *unstructured.Unstructured
		dev2Denied bool
	}{
		{"a Role's rules replaced with *", policy(role, `plaintext: [{path: /rules, operator: replace, value: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]}]`), true},
		{"one rule's verbs, in another letter case", policy(role, `plaintext: [{path: /Rules/0/verbs, operator: replace, value: ["*"]}]`), true},
		{"a RoleBinding's roleRef made cluster-admin", policy(binding, `plaintext: [{path: /roleRef, operator: replace, value: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}]`), true},
		{"subjects through a field overrider", policy(binding, `fieldOverrider: [{fieldPath: /subjects, json: [{subPath: /0/name, operator: replace, value: system:authenticated}]}]`), true},
		{"no selector: every kind, RBAC included", policy("", `plaintext: [{path: /rules, operator: remove}]`), true},
		{"a ClusterRole aggregated into admin", policy(`resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole}]`,
			`labelsOverrider: [{operator: add, value: {rbac.authorization.k8s.io/aggregate-to-admin: "true"}}]`), true},
		{"a Role's labels", policy(role, `labelsOverrider: [{operator: add, value: {team: a}}]`), false},
		{"a ConfigMap's rules key", policy(configMap, `plaintext: [{path: /data/rules, operator: add, value: "x"}]`), false},
	} {
		err := dev2.Create(ctx, tc.p.DeepCopy(), client.DryRunAll)
		switch {
		case tc.dev2Denied && (err == nil || !strings.Contains(err.Error(), "needs escalate and bind on roles and clusterroles in namespace "+ns)):
			t.Errorf("%s: dev2 want refused (EscalationForbidden), got %v", tc.name, err)
		case !tc.dev2Denied && err != nil:
			t.Errorf("%s: dev2 refused: %v", tc.name, err)
		}
		if err := hub.Create(ctx, tc.p.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("%s: the administrator refused: %v", tc.name, err)
		}
	}
	// A ClusterOverridePolicy's request has no namespace: checked
	// cluster-wide, and an administrator may write it.
	cop := policy(role, `plaintext: [{path: /rules, operator: remove}]`)
	cop.SetKind("ClusterOverridePolicy")
	cop.SetNamespace("")
	if err := hub.Create(ctx, cop, client.DryRunAll); err != nil {
		t.Errorf("a ClusterOverridePolicy on RBAC rules: the administrator refused: %v", err)
	}
}

// testDashboardRoles: examples/dashboard's viewer and operator roles grant
// exactly what their comments say, verb by verb, as the hub's authorizer
// answers for their ServiceAccounts.
func testDashboardRoles(t *testing.T) {
	ctx := context.Background()
	for _, f := range []string{"viewer.yaml", "operator.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "dashboard", f))
		if err != nil {
			t.Fatal(err)
		}
		apply(t, string(data))
	}
	kc, err := kubernetes.NewForConfig(fleet.Hub.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	const work = "work.shepherd.io"
	type check struct {
		verb, group, resource, subresource string
	}
	for _, tc := range []struct {
		role    string
		allowed []check
		refused []check
	}{
		{"dashboard-viewer",
			[]check{{"list", work, "resourcebindings", ""}, {"watch", work, "clusterresourcebindings", ""}, {"list", "cluster.shepherd.io", "clusters", ""},
				{"list", "policy.shepherd.io", "propagationpolicies", ""}, {"list", "task.shepherd.io", "rescheduletasks", ""}, {"list", "events.k8s.io", "events", ""},
				{"watch", "multicluster.shepherd.io", "exportedservices", ""}},
			[]check{{"list", work, "works", ""}, {"get", "", "secrets", ""}, {"patch", work, "resourcebindings", ""}, {"create", "task.shepherd.io", "rescheduletasks", ""},
				{"confirm", work, "resourcebindings", "failover"}, {"approve", work, "resourcebindings", "rollout"}, {"list", "apps", "deployments", ""}}},
		{"dashboard-operator",
			[]check{{"create", "task.shepherd.io", "rescheduletasks", ""}, {"patch", work, "resourcebindings", ""}, {"patch", work, "clusterresourcebindings", ""},
				{"confirm", work, "resourcebindings", "failover"}, {"confirm", work, "clusterresourcebindings", "failover"}, {"list", work, "resourcebindings", ""}},
			[]check{{"list", work, "works", ""}, {"get", "", "secrets", ""}, {"create", work, "resourcebindings", ""}, {"approve", work, "resourcebindings", "rollout"},
				{"pause", work, "resourcebindings", "rollout"}, {"undo", work, "resourcebindings", "rollout"}, {"patch", work, "works", ""}, {"delete", work, "resourcebindings", ""},
				{"patch", "policy.shepherd.io", "propagationpolicies", ""}, {"manage", work, "resourcebindings", ""}}},
	} {
		user := "system:serviceaccount:default:" + tc.role
		ask := func(c check) bool {
			t.Helper()
			r, err := kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource, Namespace: ns},
			}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return r.Status.Allowed
		}
		for _, c := range tc.allowed {
			if !ask(c) {
				t.Errorf("%s may not %s %s/%s %s, which its comment grants", tc.role, c.verb, c.group, c.resource, c.subresource)
			}
		}
		for _, c := range tc.refused {
			if ask(c) {
				t.Errorf("%s may %s %s/%s %s, beyond what its comment grants", tc.role, c.verb, c.group, c.resource, c.subresource)
			}
		}
	}
}
