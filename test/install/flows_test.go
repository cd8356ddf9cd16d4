package install

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// ns holds the workload of the test.
const ns = "least-privilege"

var web = client.ObjectKey{Namespace: ns, Name: "web"}

func yamlToObject(doc string, u *unstructured.Unstructured) error {
	return yaml.Unmarshal([]byte(doc), &u.Object)
}

func waitMembersReady(t *testing.T) {
	for _, m := range members {
		eventually(t, m+" Ready with its API enablements", func() error {
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(context.Background(), client.ObjectKey{Name: m}, c); err != nil {
				return err
			}
			if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) || len(c.Status.APIEnablements) == 0 {
				return fmt.Errorf("status %+v", c.Status.Conditions)
			}
			return nil
		})
	}
}

// binding is the ResourceBinding of the Deployment web.
func binding() (*workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	return rb, hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-deployment"}, rb)
}

// targets are the binding's active targets: cluster -> replicas.
func targets(rb *workv1alpha1.ResourceBinding) map[string]int32 {
	return fleetenv.ActiveTargets(rb.Spec.Clusters)
}

// memberDeployment checks member runs web with want replicas, all available.
func memberDeployment(member string, want int32) error {
	d := &appsv1.Deployment{}
	if err := memberCl[member].Get(context.Background(), web, d); err != nil {
		return err
	}
	if ptr.Deref(d.Spec.Replicas, 1) != want || d.Status.AvailableReplicas != want {
		return fmt.Errorf("%s: replicas %d, %d available; want %d", member, ptr.Deref(d.Spec.Replicas, 1), d.Status.AvailableReplicas, want)
	}
	return nil
}

// testPropagation: a Deployment with a ConfigMap and a Secret it depends
// on reaches both members, divided; the hub's Deployment shows the
// members' ready replicas (the status write to templates).
func testPropagation(t *testing.T) {
	createNamespace(t, ns)
	apply(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: least-privilege}
data: {greeting: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: least-privilege}
stringData: {password: not-a-real-one}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: least-privilege}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        envFrom: [{configMapRef: {name: web-config}}, {secretRef: {name: web-secret}}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: least-privilege}
spec:
  propagateDeps: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}`)
	for _, m := range []string{"member1", "member2"} {
		eventually(t, "web running in "+m, func() error { return memberDeployment(m, 1) })
		for _, dep := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
			name := map[bool]string{true: "web-config", false: "web-secret"}[isConfigMap(dep)]
			eventually(t, name+" in "+m, func() error {
				return memberCl[m].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, dep)
			})
		}
	}
	eventually(t, "the hub's Deployment reports the members' ready replicas", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(context.Background(), web, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("status.readyReplicas %d, want 2", d.Status.ReadyReplicas)
		}
		return nil
	})
}

func isConfigMap(o client.Object) bool { _, ok := o.(*corev1.ConfigMap); return ok }

// testWebhooks: the validating webhook answers (a rule that does not
// compile is refused), and the health interpreter controller reports a
// good one Compiled; the autoscalers' webhooks, of namespaced kinds,
// answer too.
func testWebhooks(t *testing.T) {
	testAutoscalerWebhooks(t)
	bad := &configv1alpha1.HealthInterpreter{ObjectMeta: metav1.ObjectMeta{Name: "least-privilege-broken"},
		Spec: configv1alpha1.HealthInterpreterSpec{Target: configv1alpha1.HealthTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Health: configv1alpha1.HealthExpression{Expression: "observedObj.data.healthy =="}}}
	err := hub.Create(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("a HealthInterpreter that does not compile: err = %v, want the webhook's refusal", err)
	}
	good := bad.DeepCopy()
	good.Name, good.Spec.Health.Expression = "least-privilege-good", `"Healthy"`
	if err := hub.Create(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hub.Delete(context.Background(), good) }()
	eventually(t, "the good HealthInterpreter Compiled", func() error {
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(good), good); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(good.Status.Conditions, configv1alpha1.ConditionCompiled) {
			return fmt.Errorf("conditions %+v", good.Status.Conditions)
		}
		return nil
	})
}

// testRescheduleTask: a task over web completes, and is deleted after its
// TTL.
func testRescheduleTask(t *testing.T) {
	task := &taskv1alpha1.RescheduleTask{ObjectMeta: metav1.ObjectMeta{Name: "least-privilege"},
		Spec: taskv1alpha1.RescheduleTaskSpec{TTLSecondsAfterFinished: ptr.To[int32](2),
			TargetRefResource: []taskv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}}}}
	if err := hub.Create(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the task completed", func() error {
		if err := hub.Get(context.Background(), client.ObjectKeyFromObject(task), task); err != nil {
			return err
		}
		c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("status %+v", task.Status)
		}
		if c.Reason != "AllSucceeded" || len(task.Status.Targets) != 1 || task.Status.Targets[0].Phase != taskv1alpha1.TargetSuccessful {
			return fmt.Errorf("completed, but not as wanted: %+v", task.Status)
		}
		return nil
	})
	eventually(t, "the task deleted after its TTL", func() error {
		err := hub.Get(context.Background(), client.ObjectKeyFromObject(task), &taskv1alpha1.RescheduleTask{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errors.New("still there"))
	})
}

// testClusterFailover: member1 tainted NoExecute (by hand, as for
// maintenance): web leaves it, member2 runs both replicas.
func testClusterFailover(t *testing.T) {
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: "member1"}, c); err != nil {
		t.Fatal(err)
	}
	orig := c.DeepCopy()
	c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: "example.com/maintenance", Effect: corev1.TaintEffectNoExecute, TimeAdded: ptr.To(metav1.Now())})
	if err := hub.Patch(context.Background(), c, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web evicted from member1", func() error {
		rb, err := binding()
		if err != nil {
			return err
		}
		if got := targets(rb); len(got) != 1 || got["member2"] != 2 {
			return fmt.Errorf("targets %v, want member2=2", got)
		}
		for _, h := range rb.Spec.EvictionHistory {
			if h.ClusterName == "member1" && h.Reason == "TaintUntolerated" {
				return nil
			}
		}
		return fmt.Errorf("no TaintUntolerated eviction of member1 in %+v", rb.Spec.EvictionHistory)
	})
	eventually(t, "member2 runs both replicas", func() error { return memberDeployment("member2", 2) })
	eventually(t, "web gone from member1", func() error {
		err := memberCl["member1"].Get(context.Background(), web, &appsv1.Deployment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errors.New("still in member1"))
	})
}

// gone checks obj (its key set) is gone from c.
func gone(c client.Client, obj client.Object) error {
	err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return errors.Join(err, fmt.Errorf("%s still there", client.ObjectKeyFromObject(obj)))
}

// testPolicyDeleted: without its policy, web's binding stays, unclaimed,
// and web keeps running in member2; deleting the template then removes
// its binding, its dependencies' attached bindings and the copies.
func testPolicyDeleted(t *testing.T) {
	policy := &unstructured.Unstructured{}
	policy.SetAPIVersion("policy.shepherd.io/v1alpha1")
	policy.SetKind("PropagationPolicy")
	policy.SetNamespace(ns)
	policy.SetName("web")
	if err := hub.Delete(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	eventually(t, "web's binding unclaimed", func() error {
		rb, err := binding()
		if err != nil {
			return err
		}
		if !workv1alpha1.Unclaimed(&rb.Status) {
			return fmt.Errorf("conditions %+v", rb.Status.Conditions)
		}
		return nil
	})
	if err := memberCl["member2"].Get(context.Background(), web, &appsv1.Deployment{}); err != nil {
		t.Fatalf("web left member2 with its policy: %v", err)
	}
	if err := hub.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-deployment", "web-config-configmap", "web-secret-secret"} {
		eventually(t, "binding "+name+" deleted", func() error {
			return gone(hub, &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		})
	}
	eventually(t, "web gone from member2", func() error {
		return gone(memberCl["member2"], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})
	})
	eventually(t, "web-config gone from member2", func() error {
		return gone(memberCl["member2"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-config"}})
	})
}

// testUnjoin: unjoining member1 (tainted, empty by now) passes the
// cluster cleanup controller's finalizer.
func testUnjoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := membership.Unjoin(ctx, hub, "member1", membership.UnjoinOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ClusterDeleted {
		t.Fatalf("unjoin: %+v", res)
	}
	eventually(t, "Cluster member1 gone", func() error {
		return gone(hub, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}})
	})
}

// testLeftover: a ConfigMap placed on member2 and on the Pull member
// (through its agent), whose binding uninstall finds.
func testLeftover(t *testing.T) {
	apply(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: leftover, namespace: least-privilege}
data: {a: b}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: leftover, namespace: least-privilege}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: leftover}
  placement:
    clusterAffinity: {clusterNames: [member2, member3]}`)
	for _, m := range []string{"member2", pullMember} {
		eventually(t, "leftover in "+m, func() error {
			return memberCl[m].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "leftover"}, &corev1.ConfigMap{})
		})
	}
}

// testUninstall: refused while bindings exist; forced, it removes all it
// installed but what it keeps (the CRDs, the guard of agents' Works, the
// namespace with the members' credentials).
func testUninstall(t *testing.T, objs []*unstructured.Unstructured) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := install.Uninstall(ctx, hub, objs, install.UninstallOptions{Wait: true})
	var refused *install.BindingsExistError
	if !errors.As(err, &refused) || refused.ResourceBindings != 1 || refused.ClusterResourceBindings != 0 {
		t.Fatalf("uninstall with a binding left: err = %v, want a refusal counting 1 ResourceBinding", err)
	}
	if err := hub.Get(ctx, client.ObjectKey{Name: "shepherd-controller-manager"}, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}}); err != nil {
		t.Fatalf("refused, yet the ClusterRole is gone: %v", err)
	}
	var out strings.Builder
	if err := install.Uninstall(ctx, hub, objs, install.UninstallOptions{Force: true, Wait: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	_, keep := install.ToDelete(objs, install.UninstallOptions{Force: true})
	for _, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.GroupVersionKind())
		err := hub.Get(ctx, client.ObjectKeyFromObject(o), u)
		kept := slices.Contains(keep, o)
		switch {
		case kept && err != nil:
			t.Errorf("%s %s should be kept: %v", o.GetKind(), o.GetName(), err)
		case !kept && !apierrors.IsNotFound(err):
			t.Errorf("%s %s should be gone: %v", o.GetKind(), o.GetName(), err)
		}
	}
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "member2"}, c); err != nil {
		t.Fatal(err)
	}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: c.Spec.SecretRef.Namespace, Name: c.Spec.SecretRef.Name}, &corev1.Secret{}); err != nil {
		t.Errorf("member2's credentials should be kept: %v", err)
	}
	t.Logf("uninstall --force:\n%s", out.String())
}
