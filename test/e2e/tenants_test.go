package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The tenancy promise: a user whose hub rights end at one namespace can
// change nothing outside that namespace in any member, whatever policy,
// override or dependency they write. TestTenantStaysInItsNamespace runs as
// such a user (a ServiceAccount of namespace e2e-tenant-a that may write
// ConfigMaps, Deployments, PropagationPolicies and OverridePolicies there
// and nothing else) and tries the known ways out. Each is refused with a
// message naming the field, and afterwards every member object outside the
// namespace is as it was: the same objects, at the same resourceVersions.
func TestTenantStaysInItsNamespace(t *testing.T) {
	const tenantNS, victimNS = "e2e-tenant-a", "e2e-tenant-b"
	ctx := context.Background()
	createNamespace(t, tenantNS)
	tenant := tenantClient(t, tenantNS)

	// Another team's namespace and data in the members, and the members'
	// cluster-wide RBAC: none of it may change.
	for _, c := range []string{"member1", "member2"} {
		if err := memberCl[c].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victimNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		memberConfigMap(t, c, victimNS, "precious")
	}
	before := outsideSnapshot(t, victimNS)

	// A legitimate propagation, so the test knows the controllers have
	// seen the tenant's objects before it compares.
	tenantApply(t, tenant, `apiVersion: v1
kind: ConfigMap
metadata: {name: legit, namespace: e2e-tenant-a}
data: {a: b}
---
`+lifecyclePolicyYAML(tenantNS, "legit", "ConfigMap", "legit", "", "member1", "member2"))

	attacks := []struct {
		name string
		yaml string
		want []string // substrings of the refusal
	}{
		{"a ConfigMap turned into a ClusterRoleBinding granting the tenant everything", `apiVersion: v1
kind: ConfigMap
metadata: {name: escalate, namespace: e2e-tenant-a}
data: {a: b}
---
` + lifecyclePolicyYAML(tenantNS, "escalate", "ConfigMap", "escalate", "", "member1") + `---
apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: escalate, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: escalate}]
  overrideRules:
  - overriders:
      plaintext:
      - {path: /apiVersion, operator: replace, value: rbac.authorization.k8s.io/v1}
      - {path: /kind, operator: replace, value: ClusterRoleBinding}
      - {path: /data, operator: remove}
      - {path: /roleRef, operator: add, value: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}
      - {path: /subjects, operator: add, value: [{kind: ServiceAccount, name: tenant, namespace: e2e-tenant-a}]}
`, []string{"spec.overrideRules[0].overriders.plaintext[0].path", "spec.overrideRules[0].overriders.plaintext[1].path", "may not touch what the object is (/apiVersion, /kind)"}},
		{"a ConfigMap turned into another team's Namespace, adopted with Overwrite", `apiVersion: v1
kind: ConfigMap
metadata: {name: e2e-tenant-b, namespace: e2e-tenant-a}
---
` + lifecyclePolicyYAML(tenantNS, "takeover", "ConfigMap", "e2e-tenant-b", "conflictResolution: Overwrite", "member2") + `---
apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: takeover, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: e2e-tenant-b}]
  overrideRules:
  - overriders:
      plaintext:
      - {path: /kind, operator: replace, value: Namespace}
      - {path: /metadata/namespace, operator: remove}
`, []string{"plaintext[0].path", "plaintext[1].path", "Shepherd keeps the object's identity"}},
		{"a ConfigMap moved into another namespace", `apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: move, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: legit}]
  overrideRules:
  - overriders:
      plaintext: [{path: /metadata/namespace, operator: replace, value: e2e-tenant-b}]
`, []string{"plaintext[0].path", "may not touch"}},
		{"a ConfigMap renamed onto another object through an image predicate", `apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: rename, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: legit}]
  overrideRules:
  - overriders:
      imageOverrider: [{predicate: {path: /metadata/name}, component: Repository, operator: replace, value: precious}]
`, []string{"imageOverrider[0].predicate.path", "may not touch"}},
		{"a finalizer that holds a member object forever", `apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: hold, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: legit}]
  overrideRules:
  - overriders:
      plaintext: [{path: /metadata/finalizers, operator: add, value: [example.com/hold]}]
`, []string{"plaintext[0].path", "may not touch"}},
		{"an interpreter customization that names dependencies anywhere", `apiVersion: config.shepherd.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: tenant-deps}
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  customizations:
    dependencyInterpretation:
      expression: "[{'apiVersion': 'v1', 'kind': 'Namespace', 'name': 'e2e-tenant-b'}]"
`, []string{"forbidden"}},
	}
	for _, a := range attacks {
		t.Run("refused: "+a.name, func(t *testing.T) {
			err := tenantCreate(tenant, a.yaml)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range a.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal %q does not contain %q", err, w)
				}
			}
		})
	}

	// A selector naming another namespace matches nothing (the API server
	// cannot see a policy's own namespace to refuse it; the detector says so
	// in an event on the policy). And a dependency is looked up in the
	// workload's own namespace, whatever name it gives: a Deployment
	// mounting "precious" brings along no other team's ConfigMap.
	tenantApply(t, tenant, `apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: reach, namespace: e2e-tenant-a}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, namespace: e2e-tenant-b, name: precious}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: reader, namespace: e2e-tenant-a}
spec:
  replicas: 1
  selector: {matchLabels: {app: reader}}
  template:
    metadata: {labels: {app: reader}}
    spec:
      containers: [{name: c, image: busybox}]
      volumes: [{name: v, configMap: {name: precious}}]
---
`+lifecyclePolicyYAML(tenantNS, "reader", "Deployment", "reader", "propagateDeps: true", "member1"))

	eventually(t, "the tenant's own ConfigMap and Deployment are in the members", func() error {
		for _, c := range []string{"member1", "member2"} {
			if err := inMember(c, client.ObjectKey{Namespace: tenantNS, Name: "legit"}, &corev1.ConfigMap{}); err != nil {
				return err
			}
		}
		return inMember("member1", client.ObjectKey{Namespace: tenantNS, Name: "reader"}, &appsv1.Deployment{})
	})
	if err := hub.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: names.BindingName("ConfigMap", "precious")}, &workv1alpha1.ResourceBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("a binding for the other team's ConfigMap: %v", err)
	}
	// The escalate and takeover ConfigMaps had their policies accepted but
	// no override: they may only arrive as ConfigMaps in the tenant's
	// namespace.
	if after := outsideSnapshot(t, victimNS); !slices.Equal(before, after) {
		t.Errorf("member objects outside %s changed:\nbefore %v\nafter  %v", tenantNS, before, after)
	}
}

// TestWorkOutsideItsBindingIsRefused: the execution controller's own check,
// whatever the checks before it let through. A Work that says it belongs
// to a ResourceBinding of a tenant namespace but holds a ClusterRoleBinding
// (as a rendering that escaped the override checks would) is Applied=False
// with reason OutOfScope, and the member gets nothing.
func TestWorkOutsideItsBindingIsRefused(t *testing.T) {
	const ns = "e2e-scope"
	ctx := context.Background()
	manifest := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"e2e-scope-escalate"},` +
		`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},` +
		`"subjects":[{"kind":"ServiceAccount","name":"tenant","namespace":"e2e-scope"}]}`
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: "escalate-configmap"}
	w := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   names.ExecutionNamespace("member1"),
			Name:        names.WorkName(ref.Namespace, ref.Name),
			Labels:      names.WorkLabels(ref, "member1"),
			Annotations: map[string]string{workv1alpha1.AnnotationBinding: ref.String(), workv1alpha1.AnnotationResourceKind: "ConfigMap"},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
	if err := hub.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(ctx, w) })
	eventually(t, "Applied=False, OutOfScope", func() error {
		got := &workv1alpha1.Work{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.WorkConditionApplied)
		if c == nil || c.Reason != execution.ReasonOutOfScope ||
			!strings.Contains(c.Message, "is of kind ClusterRoleBinding.rbac.authorization.k8s.io, but ResourceBinding e2e-scope/escalate-configmap places a ConfigMap") {
			return fmt.Errorf("Applied: %+v", c)
		}
		return nil
	})
	if err := goneFromMember("member1", client.ObjectKey{Name: "e2e-scope-escalate"}, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Error(err)
	}
}

// tenantClient creates ServiceAccount "tenant" in ns with the rights of a
// namespace tenant (ConfigMaps, Deployments, PropagationPolicies and
// OverridePolicies in ns; nothing cluster-wide) and returns a client that
// acts with its token and nothing else.
func tenantClient(t *testing.T, ns string) client.Client {
	t.Helper()
	ctx := context.Background()
	applyYAML(t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: tenant, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: tenant, namespace: %[1]s}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments]
  verbs: ["*"]
- apiGroups: [policy.shepherd.io]
  resources: [propagationpolicies, overridepolicies]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: tenant, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant}
subjects: [{kind: ServiceAccount, name: tenant, namespace: %[1]s}]
`, ns))
	kc, err := kubernetes.NewForConfig(fleet.Hub.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := kc.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "tenant",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(fleet.Hub.RestConfig())
	cfg.BearerToken = tr.Status.Token
	c, err := fleetenv.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tenantCreate creates every object of a YAML stream as the tenant and
// returns the first refusal; objects already created stay (the test's
// namespace holds them).
func tenantCreate(c client.Client, yaml string) error {
	objs, err := testenv.DecodeYAML([]byte(yaml))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// tenantApply creates the objects of a YAML stream as the tenant, failing
// the test on a refusal.
func tenantApply(t *testing.T, c client.Client, yaml string) {
	t.Helper()
	if err := tenantCreate(c, yaml); err != nil {
		t.Fatal(err)
	}
}

// outsideSnapshot lists, for member1 and member2, every ClusterRoleBinding
// and ClusterRole, the Namespace victimNS and every ConfigMap in it, each
// with its resourceVersion: any change to one of them, or a new one,
// changes the snapshot. (The rest of a member changes under the other
// tests of the suite.)
func outsideSnapshot(t *testing.T, victimNS string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, c := range []string{"member1", "member2"} {
		lists := []struct {
			list client.ObjectList
			opts []client.ListOption
		}{
			{&rbacv1.ClusterRoleBindingList{}, nil},
			{&rbacv1.ClusterRoleList{}, nil},
			{&corev1.NamespaceList{}, []client.ListOption{client.MatchingFields{"metadata.name": victimNS}}},
			{&corev1.ConfigMapList{}, []client.ListOption{client.InNamespace(victimNS)}},
		}
		for _, l := range lists {
			if err := memberCl[c].List(ctx, l.list, l.opts...); err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(l.list)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				o := it.(client.Object)
				out = append(out, fmt.Sprintf("%s %T %s/%s@%s", c, o, o.GetNamespace(), o.GetName(), o.GetResourceVersion()))
			}
		}
	}
	slices.Sort(out)
	return out
}
