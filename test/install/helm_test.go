package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/charts"
	"github.com/shepherd-io/shepherd/pkg/install"
)

// chartNS holds the user objects of the chart's test.
const chartNS = "helm-chart"

// chartMembers are the clusters the chart's test propagates to: a Push
// and a Pull cluster that the other test of this package keeps joined.
var chartMembers = []string{"member2", pullMember}

// TestHelmChartUnderItsOwnRBAC installs charts/shepherd with Helm's Go SDK
// (as `helm install --take-ownership`: `shepherd register` applied the
// agent guard already), runs the controller manager with nothing but a
// token of the chart's ServiceAccount, propagates a workload, then
// upgrades the release with changed values: every user object (policies,
// templates, bindings, Works, the members' copies) is the same object
// afterwards, the new values are live, the webhooks still answer, and the
// controller manager was refused nothing. Uninstalling keeps the CRDs and
// the Clusters.
func TestHelmChartUnderItsOwnRBAC(t *testing.T) {
	ctx := context.Background()
	port := freePort(t)
	// The embedded hub cannot route to a Service: the webhooks are
	// reached by URL, on the replica's loopback port.
	values := []string{fmt.Sprintf("webhooks.url=https://127.0.0.1:%d", port)}
	vals, err := charts.Values(values...)
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, install.Namespace) // helm install --create-namespace
	helm, err := charts.Client(fleet.Hub.KubeconfigPath(), install.Namespace, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := charts.Install(helm, install.Namespace, vals, true, 2*time.Minute)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("release %s revision %d %s", rel.Name, rel.Version, rel.Info.Status)
	installed, err := charts.Decode(rel.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := charts.Render(install.Namespace, vals)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := install.WaitEstablished(waitCtx, hub, crds); err != nil {
		t.Fatal(err)
	}

	cfg := serviceAccountConfig(t)
	forbids := &forbidden{}
	cfg.WrapTransport = forbids.wrap
	stop := startControllerManager(t, cfg, port)
	running := true
	defer func() {
		if running {
			_ = stop()
		}
	}()
	// restart stops the controller manager, as an upgrade's rollout
	// replaces the pods, and starts it again once upgrade has run.
	restart := func(t *testing.T, upgrade func(*testing.T)) {
		running = false
		if err := stop(); err != nil {
			t.Errorf("the controller manager stopped with %v", err)
		}
		upgrade(t)
		stop, running = startControllerManager(t, cfg, port), true
	}

	var before map[string]string
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"leader elected and webhook CA published", waitLeaderAndWebhook},
		{"members ready", func(t *testing.T) { waitReady(t, chartMembers) }},
		{"webhooks", testWebhooks},
		{"user objects propagate", testChartWorkload},
		{"snapshot", func(t *testing.T) { before = userObjects(t) }},
		{"upgrade with changed values, controller manager restarted", func(t *testing.T) {
			restart(t, func(t *testing.T) { testUpgrade(t, values) })
		}},
		{"leader elected again", waitLeaderAndWebhook},
		{"webhooks answer after the upgrade", webhookRefuses},
		{"user objects kept", func(t *testing.T) { sameObjects(t, before, userObjects(t)) }},
		{"still propagating", testChartWorkloadScaled},
		{"user objects still kept", func(t *testing.T) { sameObjects(t, before, userObjects(t)) }},
		{"user objects removed", removeChartWorkload},
	}
	passed := true
	for _, s := range steps {
		if passed = t.Run(s.name, s.run); !passed {
			break
		}
	}
	running = false
	if err := stop(); err != nil {
		t.Errorf("the controller manager stopped with %v", err)
	}
	if got := forbids.list(); len(got) > 0 {
		t.Errorf("the controller manager was refused these requests; the chart's RBAC lacks:\n%s", strings.Join(got, "\n"))
	}
	if !passed {
		t.FailNow()
	}
	t.Run("uninstall keeps the CRDs and the Clusters", func(t *testing.T) {
		if err := charts.Uninstall(helm, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		for _, o := range installed {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			u.SetNamespace(o.GetNamespace())
			u.SetName(o.GetName())
			eventually(t, o.GetKind()+" "+o.GetName()+" uninstalled", func() error { return gone(hub, u) })
		}
		for _, o := range crds {
			if o.GetKind() == "CustomResourceDefinition" {
				crd := &unstructured.Unstructured{}
				crd.SetGroupVersionKind(o.GroupVersionKind())
				if err := hub.Get(ctx, client.ObjectKey{Name: o.GetName()}, crd); err != nil {
					t.Errorf("CRD %s: %v", o.GetName(), err)
				}
			}
		}
		for _, m := range chartMembers {
			if err := hub.Get(ctx, client.ObjectKey{Name: m}, &clusterv1alpha1.Cluster{}); err != nil {
				t.Errorf("Cluster %s: %v", m, err)
			}
		}
	})
}

// webhookRefuses waits until the webhooks refuse a HealthInterpreter whose
// CEL does not compile (a restarted replica publishes its new CA first).
func webhookRefuses(t *testing.T) {
	bad := &configv1alpha1.HealthInterpreter{ObjectMeta: metav1.ObjectMeta{Name: "helm-chart-broken"},
		Spec: configv1alpha1.HealthInterpreterSpec{Target: configv1alpha1.HealthTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Health: configv1alpha1.HealthExpression{Expression: "observedObj.data.healthy =="}}}
	eventually(t, "the webhook refuses a HealthInterpreter that does not compile", func() error {
		err := hub.Create(context.Background(), bad.DeepCopy())
		if err == nil {
			_ = hub.Delete(context.Background(), bad)
			return fmt.Errorf("accepted")
		}
		if !strings.Contains(err.Error(), "does not compile") {
			return err
		}
		return nil
	})
}

// waitReady waits until each cluster is Ready.
func waitReady(t *testing.T, clusters []string) {
	for _, m := range clusters {
		eventually(t, m+" Ready", func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: m}, c); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return fmt.Errorf("status %+v", c.Status.Conditions)
			}
			return nil
		})
	}
}

// chartWorkload is a Deployment with a ConfigMap it depends on, sent to
// both members by a PropagationPolicy, with an OverridePolicy labelling
// the members' copies.
func chartWorkload(replicas int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: helm-chart}
data: {greeting: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: helm-chart}
spec:
  replicas: %d
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        envFrom: [{configMapRef: {name: app-config}}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: app, namespace: helm-chart}
spec:
  propagateDeps: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: app}
  placement:
    clusterAffinity: {clusterNames: [member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: app, namespace: helm-chart}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: app}
  overrideRules:
  - overriders:
      labelsOverrider:
      - {operator: add, value: {installed-by: helm}}`, replicas)
}

// appIn checks that member runs app with want replicas.
func appIn(member string, want int32) error {
	d := &appsv1.Deployment{}
	if err := memberCl[member].Get(context.Background(), client.ObjectKey{Namespace: chartNS, Name: "app"}, d); err != nil {
		return err
	}
	if ptr.Deref(d.Spec.Replicas, 1) != want || d.Labels["installed-by"] != "helm" {
		return fmt.Errorf("%s: replicas %d, labels %v; want %d and the override's label", member, ptr.Deref(d.Spec.Replicas, 1), d.Labels, want)
	}
	return nil
}

func testChartWorkload(t *testing.T) {
	createNamespace(t, chartNS)
	apply(t, chartWorkload(1))
	for _, m := range chartMembers {
		eventually(t, "app in "+m, func() error { return appIn(m, 1) })
		eventually(t, "app-config in "+m, func() error {
			return memberCl[m].Get(context.Background(), client.ObjectKey{Namespace: chartNS, Name: "app-config"}, &corev1.ConfigMap{})
		})
	}
}

func testChartWorkloadScaled(t *testing.T) {
	apply(t, chartWorkload(2))
	for _, m := range chartMembers {
		eventually(t, "app scaled in "+m, func() error { return appIn(m, 2) })
	}
}

// userKinds are the kinds of the user's objects and of what Shepherd made
// of them, on the hub.
var userKinds = []schema.GroupVersionKind{
	{Group: "policy.shepherd.io", Version: "v1alpha1", Kind: "PropagationPolicyList"},
	{Group: "policy.shepherd.io", Version: "v1alpha1", Kind: "OverridePolicyList"},
	{Group: "apps", Version: "v1", Kind: "DeploymentList"},
	{Group: "", Version: "v1", Kind: "ConfigMapList"},
	{Group: "work.shepherd.io", Version: "v1alpha1", Kind: "ResourceBindingList"},
	{Group: "work.shepherd.io", Version: "v1alpha1", Kind: "WorkList"},
	{Group: "cluster.shepherd.io", Version: "v1alpha1", Kind: "ClusterList"},
}

// userObjects are the chart test's objects, hub and members: kind and
// name -> UID. Works live in the execution namespaces, so all namespaces
// are listed and the test's objects kept.
func userObjects(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvk := range userKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		if err := hub.List(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			mine := o.GetNamespace() == chartNS || gvk.Kind == "ClusterList" ||
				(gvk.Kind == "WorkList" && strings.HasPrefix(o.GetName(), chartNS+"."))
			if gvk.Kind == "ConfigMapList" && o.GetName() == "kube-root-ca.crt" {
				mine = false
			}
			if !mine {
				continue
			}
			if o.GetDeletionTimestamp() != nil {
				t.Errorf("%s %s/%s is being deleted", o.GetKind(), o.GetNamespace(), o.GetName())
			}
			out["hub "+o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = string(o.GetUID())
		}
	}
	for _, m := range chartMembers {
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}} {
			name := "app"
			if _, ok := o.(*corev1.ConfigMap); ok {
				name = "app-config"
			}
			if err := memberCl[m].Get(context.Background(), client.ObjectKey{Namespace: chartNS, Name: name}, o); err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s %T %s", m, o, name)] = string(o.GetUID())
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d user objects found: %v", len(out), out)
	}
	return out
}

// sameObjects fails unless every object of before is there, the same
// object (UID), afterwards.
func sameObjects(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, uid := range before {
		switch got, ok := after[k]; {
		case !ok:
			t.Errorf("%s is gone after the upgrade", k)
		case got != uid:
			t.Errorf("%s was replaced by the upgrade (UID %s, was %s)", k, got, uid)
		}
	}
	t.Logf("%d user objects kept", len(before))
}

// testUpgrade upgrades the release with other replicas, priority shares,
// resources and an extra RBAC rule, and sees each of them live.
func testUpgrade(t *testing.T, values []string) {
	ctx := context.Background()
	vals, err := charts.Values(append(values,
		"replicas=3",
		"resources.requests.cpu=200m",
		"flowControl.scheduling.nominalConcurrencyShares=50",
		"rbac.extraRules[0].apiGroups[0]=example.com,rbac.extraRules[0].resources[0]=widgets,rbac.extraRules[0].verbs[0]=get")...)
	if err != nil {
		t.Fatal(err)
	}
	helm, err := charts.Client(fleet.Hub.KubeconfigPath(), install.Namespace, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := charts.Upgrade(helm, install.Namespace, vals, 2*time.Minute)
	if err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	if rel.Version != 2 {
		t.Errorf("release revision %d, want 2", rel.Version)
	}
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: install.Namespace, Name: install.Deployment}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); ptr.Deref(d.Spec.Replicas, 0) != 3 || got != "200m" {
		t.Errorf("Deployment: replicas %d, cpu request %s; want 3 and 200m", ptr.Deref(d.Spec.Replicas, 0), got)
	}
	plc := &flowcontrolv1.PriorityLevelConfiguration{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "shepherd-scheduling"}, plc); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(plc.Spec.Limited.NominalConcurrencyShares, 0); got != 50 {
		t.Errorf("shepherd-scheduling shares %d, want 50", got)
	}
	cr := &rbacv1.ClusterRole{}
	if err := hub.Get(ctx, client.ObjectKey{Name: install.Deployment}, cr); err != nil {
		t.Fatal(err)
	}
	if last := cr.Rules[len(cr.Rules)-1]; len(last.Resources) != 1 || last.Resources[0] != "widgets" {
		t.Errorf("the ClusterRole's last rule %+v, want the extra rule", last)
	}
}

// removeChartWorkload deletes the policies and templates while the
// controller manager runs, so the Works' finalizers are released.
func removeChartWorkload(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "policy.shepherd.io", Version: "v1alpha1", Kind: "PropagationPolicy"},
		{Group: "policy.shepherd.io", Version: "v1alpha1", Kind: "OverridePolicy"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "", Version: "v1", Kind: "ConfigMap"},
	} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(chartNS)
		u.SetName(map[bool]string{true: "app-config", false: "app"}[gvk.Kind == "ConfigMap"])
		if err := client.IgnoreNotFound(hub.Delete(context.Background(), u)); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range chartMembers {
		eventually(t, "app gone from "+m, func() error {
			return gone(memberCl[m], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: chartNS, Name: "app"}})
		})
	}
	eventually(t, "the bindings gone", func() error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: "work.shepherd.io", Version: "v1alpha1", Kind: "ResourceBindingList"})
		if err := hub.List(context.Background(), l, client.InNamespace(chartNS)); err != nil {
			return err
		}
		if len(l.Items) > 0 {
			return fmt.Errorf("%d bindings left", len(l.Items))
		}
		return nil
	})
}
