package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/test/testenv"
)

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string]string{"k": "v"},
	}
}

// TestExecutionAgainstRealMembers applies Works to a real member API server
// while another member's endpoint never answers.
func TestExecutionAgainstRealMembers(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	membershiptest.AddCluster(t, hub, "dead", member.Kubeconfig(t), membershiptest.BlackHole(t))
	mk := member.Kube(t)

	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		return execution.Setup(d, execution.Options{Workers: 2, RetryBaseDelay: 200 * time.Millisecond})
	})

	// Works for the dead member first: they must not hold up m1's.
	for i := range 4 {
		membershiptest.CreateWork(t, hub, membershiptest.Work(t, "dead", fmt.Sprintf("w%d", i), nil, configMap("default", fmt.Sprintf("c%d", i))))
	}
	begin := time.Now()
	app := membershiptest.Work(t, "m1", "app", nil, deployment("shop", "web", 3), configMap("shop", "web-config"))
	membershiptest.CreateWork(t, hub, app)

	work := &workv1alpha1.Work{}
	key := client.ObjectKeyFromObject(app)
	waitApplied(t, hub, key, work, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
	t.Logf("m1's Work applied in %s beside a dead member", time.Since(begin).Round(time.Millisecond))
	if time.Since(begin) > 3*time.Second {
		t.Errorf("m1's Work took %s: blocked by the dead member?", time.Since(begin))
	}
	if !controllerutil.ContainsFinalizer(work, workv1alpha1.FinalizerWork) {
		t.Errorf("no finalizer: %v", work.Finalizers)
	}
	ids := work.Status.ManifestStatuses
	if len(ids) != 2 || ids[0].Identifier.Resource != "deployments" || ids[1].Identifier.Resource != "configmaps" || ids[1].Identifier.Ordinal != 1 {
		t.Errorf("manifest identifiers: %+v", ids)
	}

	ns, err := mk.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{})
	if err != nil || ns.Labels[workv1alpha1.LabelManagedBy] != "shepherd" {
		t.Fatalf("namespace shop in the member: %v %v", err, ns)
	}
	dep, err := mk.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dep.Labels[workv1alpha1.LabelManagedBy] != "shepherd" || dep.Annotations[workv1alpha1.AnnotationWork] != "shepherd-es-m1/app" || *dep.Spec.Replicas != 3 {
		t.Errorf("member Deployment: labels %v annotations %v", dep.Labels, dep.Annotations)
	}
	// Created, not applied: the fields are Shepherd's as an update until
	// the first change hands them to server-side apply.
	if mf := dep.ManagedFields; len(mf) == 0 || mf[0].Manager != "shepherd" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managed fields: %+v", mf)
	}

	t.Run("a key left out at the first change is removed from the member", func(t *testing.T) {
		changed := configMap("shop", "web-config")
		changed.Data = map[string]string{"k2": "v2"}
		raw, err := json.Marshal(changed)
		if err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, hub, key, func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[1].Raw = raw })
		testenv.Eventually(t, 10*time.Second, "data k2 only", func() error {
			cm, err := mk.CoreV1().ConfigMaps("shop").Get(ctx, "web-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !maps.Equal(cm.Data, changed.Data) {
				return fmt.Errorf("data %v", cm.Data)
			}
			for _, m := range cm.ManagedFields {
				if m.Manager == "shepherd" && m.Operation != metav1.ManagedFieldsOperationApply {
					return fmt.Errorf("shepherd still manages fields by %s: %+v", m.Operation, cm.ManagedFields)
				}
			}
			return nil
		})
	})

	t.Run("the dead member's Works report the failure", func(t *testing.T) {
		w := &workv1alpha1.Work{}
		waitApplied(t, hub, types.NamespacedName{Namespace: "shepherd-es-dead", Name: "w3"}, w, metav1.ConditionFalse, execution.ReasonAppliedFailed)
		msg := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied).Message
		// A timeout reads as the HTTP client's or the request context's,
		// depending on which request (discovery or the write) meets it first.
		if !strings.Contains(msg, "Client.Timeout") && !strings.Contains(msg, "deadline exceeded") && !strings.Contains(msg, "did not answer") {
			t.Errorf("message: %s", msg)
		}
	})

	t.Run("a manifest dropped from the Work is deleted from the member", func(t *testing.T) {
		mustUpdate(t, hub, key, func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests = w.Spec.Workload.Manifests[:1] })
		testenv.Eventually(t, 10*time.Second, "ConfigMap deleted", func() error {
			return gone(mk.CoreV1().ConfigMaps("shop").Get(ctx, "web-config", metav1.GetOptions{}))
		})
		testenv.Eventually(t, 5*time.Second, "one identifier", func() error {
			if err := hub.Get(ctx, key, work); err != nil {
				return err
			}
			if n := len(work.Status.ManifestStatuses); n != 1 {
				return fmt.Errorf("%d identifiers", n)
			}
			return nil
		})
		if _, err := mk.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{}); err != nil {
			t.Errorf("the Deployment went too: %v", err)
		}
	})

	t.Run("an invalid manifest is reported", func(t *testing.T) {
		bad := membershiptest.Work(t, "m1", "bad", nil, map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}})
		membershiptest.CreateWork(t, hub, bad)
		w := &workv1alpha1.Work{}
		waitApplied(t, hub, client.ObjectKeyFromObject(bad), w, metav1.ConditionFalse, execution.ReasonAppliedFailed)
		if msg := meta.FindStatusCondition(w.Status.Conditions, "Applied").Message; !strings.Contains(msg, "example.com/v1 Gadget g") {
			t.Errorf("message: %s", msg)
		}
	})

	t.Run("deleting the Work deletes its objects from the member", func(t *testing.T) {
		if err := hub.Delete(ctx, work); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "Deployment deleted", func() error {
			return gone(mk.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{}))
		})
		testenv.Eventually(t, 5*time.Second, "Work released", func() error { return gone(nil, hub.Get(ctx, key, &workv1alpha1.Work{})) })
		if _, err := mk.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{}); err != nil {
			t.Errorf("the namespace went too: %v", err)
		}
	})

	t.Run("preserveResourcesOnDeletion keeps the objects", func(t *testing.T) {
		keep := membershiptest.Work(t, "m1", "keep", nil, configMap("shop", "kept"))
		keep.Spec.PreserveResourcesOnDeletion = true
		membershiptest.CreateWork(t, hub, keep)
		waitApplied(t, hub, client.ObjectKeyFromObject(keep), &workv1alpha1.Work{}, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		if err := hub.Delete(ctx, keep); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, "Work released", func() error {
			return gone(nil, hub.Get(ctx, client.ObjectKeyFromObject(keep), &workv1alpha1.Work{}))
		})
		if _, err := mk.CoreV1().ConfigMaps("shop").Get(ctx, "kept", metav1.GetOptions{}); err != nil {
			t.Errorf("preserved ConfigMap: %v", err)
		}
	})

	t.Run("a member object another Work owns is left alone", func(t *testing.T) {
		owned := membershiptest.Work(t, "m1", "owner", nil, configMap("shop", "shared"))
		membershiptest.CreateWork(t, hub, owned)
		waitApplied(t, hub, client.ObjectKeyFromObject(owned), &workv1alpha1.Work{}, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		intruder := membershiptest.Work(t, "m1", "intruder", nil, configMap("shop", "other"))
		membershiptest.CreateWork(t, hub, intruder)
		w := &workv1alpha1.Work{}
		waitApplied(t, hub, client.ObjectKeyFromObject(intruder), w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		// Pretend the intruder once applied "shared" too: its identifiers
		// say so, but the object's annotation names the owner.
		w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, workv1alpha1.ManifestStatus{Identifier: workv1alpha1.ResourceIdentifier{
			Ordinal: 1, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "shop", Name: "shared"}})
		if err := hub.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		if err := hub.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, "intruder released", func() error {
			return gone(nil, hub.Get(ctx, client.ObjectKeyFromObject(intruder), &workv1alpha1.Work{}))
		})
		if _, err := mk.CoreV1().ConfigMaps("shop").Get(ctx, "shared", metav1.GetOptions{}); err != nil {
			t.Errorf("another Work's ConfigMap was deleted: %v", err)
		}
	})

	t.Run("Works of a deleted Cluster are released", func(t *testing.T) {
		if err := hub.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "dead"}}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			k := types.NamespacedName{Namespace: "shepherd-es-dead", Name: fmt.Sprintf("w%d", i)}
			if err := hub.Delete(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 10*time.Second, "released "+k.Name, func() error { return gone(nil, hub.Get(ctx, k, &workv1alpha1.Work{})) })
		}
	})
}

func waitApplied(t *testing.T, hub client.Client, key types.NamespacedName, w *workv1alpha1.Work, status metav1.ConditionStatus, reason string) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("%s Applied=%s", key, status), func() error {
		if err := hub.Get(context.Background(), key, w); err != nil {
			return err
		}
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Applied = %+v", c)
		}
		return nil
	})
}

func mustUpdate(t *testing.T, hub client.Client, key types.NamespacedName, mutate func(*workv1alpha1.Work)) {
	t.Helper()
	w := &workv1alpha1.Work{}
	if err := hub.Get(context.Background(), key, w); err != nil {
		t.Fatal(err)
	}
	mutate(w)
	if err := hub.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

// gone turns a Get's result into nil when the object is gone.
func gone(_ any, err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("still there")
	}
	return err
}
