package workstatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/controllers/workstatus"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

func deployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// TestStatusFlowsBackToTheHub: a member Deployment's status reaches its
// Work, the binding's aggregatedStatus and the hub template's status.
func TestStatusFlowsBackToTheHub(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	members := map[string]*membershiptest.Member{"m1": membershiptest.StartMember(t, "m1"), "m2": membershiptest.StartMember(t, "m2")}
	for _, m := range members {
		m.Join(t, hub)
	}
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr}.WithDefaults()
		if err := execution.Setup(d, execution.Options{}); err != nil {
			return err
		}
		return workstatus.Setup(d, workstatus.Options{})
	})

	// The hub: template, binding, and one Work per cluster as the binding
	// controller would write them.
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	dep := deployment(5)
	if err := hub.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}, Spec: workv1alpha1.BindingSpec{
		Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: string(dep.UID)},
		Replicas: 5,
		Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}},
	}}
	if err := hub.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: "web-deployment"}
	for cluster, replicas := range map[string]int32{"m1": 3, "m2": 2} {
		w := membershiptest.Work(t, cluster, "shop.web-deployment", names.BindingLabels(ref), deployment(replicas))
		membershiptest.CreateWork(t, hub, w)
	}

	// The members' deployment controllers are simulated: write status.
	begin := time.Now()
	setStatus(t, members["m1"].Kube(t), appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3})
	setStatus(t, members["m2"].Kube(t), appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1})

	testenv.Eventually(t, 30*time.Second, "Work status", func() error {
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: "shepherd-es-m1", Name: "shop.web-deployment"}, w); err != nil {
			return err
		}
		if len(w.Status.ManifestStatuses) != 1 {
			return fmt.Errorf("manifest statuses %+v", w.Status.ManifestStatuses)
		}
		ms := w.Status.ManifestStatuses[0]
		if ms.Health != policyv1alpha1.ResourceHealthy || ms.Status == nil || readyReplicas(ms.Status.Raw) != 3 {
			return fmt.Errorf("manifest status %+v", ms)
		}
		return nil
	})
	var agg []workv1alpha1.AggregatedStatusItem
	testenv.Eventually(t, 30*time.Second, "binding aggregatedStatus", func() error {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		agg = rb.Status.AggregatedStatus
		if len(agg) != 2 || agg[0].Health != policyv1alpha1.ResourceHealthy || agg[1].Health != policyv1alpha1.ResourceUnhealthy {
			return fmt.Errorf("aggregatedStatus %+v", agg)
		}
		return nil
	})
	m1, m2 := agg[0], agg[1]
	if m1.ClusterName != "m1" || !m1.Applied || !m1.Settled || m1.FirstCollectedTime == nil || m1.UnhealthySince != nil || readyReplicas(m1.Status.Raw) != 3 {
		t.Errorf("m1 item: %+v", m1)
	}
	if !m2.Applied || m2.Settled || m2.UnhealthySince == nil || m2.FirstCollectedTime == nil {
		t.Errorf("m2 item: %+v", m2)
	}
	waitTemplate(t, hub, map[string]int64{"replicas": 5, "updatedReplicas": 5, "readyReplicas": 4, "availableReplicas": 4, "unavailableReplicas": 1})
	t.Logf("member status reached the hub template in %s", time.Since(begin).Round(time.Millisecond))

	t.Run("recovery clears unhealthySince and settles", func(t *testing.T) {
		first := m2.FirstCollectedTime
		setStatus(t, members["m2"].Kube(t), appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
		testenv.Eventually(t, 30*time.Second, "m2 healthy", func() error {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return err
			}
			it := rb.Status.AggregatedStatus[1]
			if it.Health != policyv1alpha1.ResourceHealthy || it.UnhealthySince != nil || !it.Settled {
				return fmt.Errorf("m2 item %+v", it)
			}
			if !it.FirstCollectedTime.Equal(first) {
				return fmt.Errorf("firstCollectedTime moved: %v -> %v", first, it.FirstCollectedTime)
			}
			return nil
		})
		waitTemplate(t, hub, map[string]int64{"replicas": 5, "readyReplicas": 5, "availableReplicas": 5, "unavailableReplicas": 0})
	})

	t.Run("a gang's unschedulable pods reach the binding", func(t *testing.T) {
		// A RayCluster on m1, whose pods are created here as KubeRay would
		// label them, and left Pending as m1's scheduler would leave them.
		kc := members["m1"].Kube(t)
		serveRayClusters(t, members["m1"])
		ray := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "ray.io/v1", "kind": "RayCluster",
			"metadata": map[string]any{"namespace": "shop", "name": "train"},
			"spec": map[string]any{"headGroupSpec": map[string]any{"template": map[string]any{}},
				"workerGroupSpecs": []any{map[string]any{"groupName": "workers", "replicas": int64(2), "template": map[string]any{}}}},
		}}
		grb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "train-raycluster"}, Spec: workv1alpha1.BindingSpec{
			Resource:   workv1alpha1.ObjectReference{APIVersion: "ray.io/v1", Kind: "RayCluster", Namespace: "shop", Name: "train", UID: "uid-train"},
			Components: []workv1alpha1.Component{{Name: "ray-head", Replicas: 1}, {Name: "workers", Replicas: 2}},
			Clusters:   []workv1alpha1.TargetCluster{{Name: "m1"}},
		}}
		if err := hub.Create(ctx, grb); err != nil {
			t.Fatal(err)
		}
		gref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: "shop", Name: grb.Name}
		membershiptest.CreateWork(t, hub, membershiptest.Work(t, "m1", "shop.train-raycluster", names.BindingLabels(gref), ray))

		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		head := map[string]string{"ray.io/node-type": "head", "ray.io/group": "headgroup"}
		worker := func(group string) map[string]string {
			return map[string]string{"ray.io/node-type": "worker", "ray.io/group": group}
		}
		for _, p := range []struct {
			name, cluster string
			labels        map[string]string
			since         time.Time // zero: not tried yet
		}{
			{"train-head", "train", head, t0.Add(time.Minute)},
			{"train-worker-a", "train", worker("workers"), t0},
			{"train-worker-b", "train", worker("workers"), time.Time{}},
			{"train-worker-c", "train", worker("workers"), t0.Add(2 * time.Minute)},
			// A group the RayCluster no longer has: in the total only.
			{"train-gone-a", "train", worker("gone"), t0.Add(3 * time.Minute)},
			{"other-head", "other", head, t0.Add(-time.Hour)}, // another RayCluster's
		} {
			p.labels["ray.io/cluster"] = p.cluster
			pendingPod(t, kc, p.name, p.labels, p.since)
		}
		// The head's and the workers' unschedulable pods, in the
		// RayCluster's order of components.
		wantComponents := []workv1alpha1.UnschedulableComponent{
			{Name: "ray-head", Replicas: 1, Since: metav1.NewTime(t0.Add(time.Minute))},
			{Name: "workers", Replicas: 2, Since: metav1.NewTime(t0)},
		}
		testenv.Eventually(t, 30*time.Second, "the Work counts four, three by component", func() error {
			w := &workv1alpha1.Work{}
			if err := hub.Get(ctx, types.NamespacedName{Namespace: "shepherd-es-m1", Name: "shop.train-raycluster"}, w); err != nil {
				return err
			}
			if len(w.Status.ManifestStatuses) != 1 {
				return fmt.Errorf("manifest statuses %+v", w.Status.ManifestStatuses)
			}
			ms := w.Status.ManifestStatuses[0]
			if err := unschedulableIs(ms.UnschedulableReplicas, ms.UnschedulableSince, 4, t0); err != nil {
				return err
			}
			return componentsAre(ms.UnschedulableComponents, wantComponents)
		})
		// What the descheduler's gang rule reads.
		testenv.Eventually(t, 30*time.Second, "the binding counts four, three by component", func() error {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(grb), grb); err != nil {
				return err
			}
			if a := grb.Status.AggregatedStatus; len(a) != 1 || a[0].ClusterName != "m1" {
				return fmt.Errorf("aggregatedStatus %+v", a)
			}
			it := grb.Status.AggregatedStatus[0]
			if err := unschedulableIs(it.UnschedulableReplicas, it.UnschedulableSince, 4, t0); err != nil {
				return err
			}
			return componentsAre(it.UnschedulableComponents, wantComponents)
		})
	})

	t.Run("ClusterResourceBinding takes the same path", func(t *testing.T) {
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
		crb := &workv1alpha1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-a-namespace"}, Spec: workv1alpha1.BindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team-a", UID: "uid-team-a"},
			Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}},
		}}
		if err := hub.Create(ctx, crb); err != nil {
			t.Fatal(err)
		}
		cref := names.BindingRef{Kind: workv1alpha1.KindClusterResourceBinding, Name: crb.Name}
		w := membershiptest.Work(t, "m1", "team-a-namespace", names.BindingLabels(cref), ns)
		w.Annotations = map[string]string{workv1alpha1.AnnotationBinding: cref.String()}
		membershiptest.CreateWork(t, hub, w)
		testenv.Eventually(t, 30*time.Second, "CRB aggregatedStatus", func() error {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(crb), crb); err != nil {
				return err
			}
			a := crb.Status.AggregatedStatus
			if len(a) != 1 || !a[0].Applied || a[0].Health != policyv1alpha1.ResourceUnknown || a[0].Status == nil {
				return fmt.Errorf("aggregatedStatus %+v", a)
			}
			return nil
		})
	})

	t.Run("a deleted Work leaves the aggregated status", func(t *testing.T) {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "shepherd-es-m2", Name: "shop.web-deployment"}}
		if err := hub.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "m2 item gone", func() error {
			if err := hub.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
				return err
			}
			if a := rb.Status.AggregatedStatus; len(a) != 1 || a[0].ClusterName != "m1" {
				return fmt.Errorf("aggregatedStatus %+v", a)
			}
			return nil
		})
		if _, err := members["m2"].Kube(t).AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("member m2 Deployment after the Work's deletion: %v", err)
		}
		waitTemplate(t, hub, map[string]int64{"replicas": 3, "readyReplicas": 3})
	})
}

// serveRayClusters makes the member serve RayClusters (their CRD, no
// KubeRay).
func serveRayClusters(t *testing.T, m *membershiptest.Member) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rayclusters.ray.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "ray.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "rayclusters", Singular: "raycluster", Kind: "RayCluster", ListKind: "RayClusterList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(m.Config()).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rcs := dynamic.NewForConfigOrDie(m.Config()).Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"})
	testenv.Eventually(t, 30*time.Second, "the member serves RayClusters", func() error {
		_, err := rcs.List(ctx, metav1.ListOptions{})
		return err
	})
}

// pendingPod creates a pod in shop and, unless since is zero, marks it
// unschedulable since then, as the member's scheduler would.
func pendingPod(t *testing.T, kc kubernetes.Interface, name string, labels map[string]string, since time.Time) {
	t.Helper()
	ctx := context.Background()
	// The ServiceAccount admission plugin wants the default account, which
	// the (absent) serviceaccount controller would create.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := kc.CoreV1().ServiceAccounts("shop").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	p, err := kc.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Image: "rayproject/ray"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if since.IsZero() {
		return
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", LastTransitionTime: metav1.NewTime(since)}}
	if _, err := kc.CoreV1().Pods("shop").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func unschedulableIs(n int32, since *metav1.Time, wantN int32, wantSince time.Time) error {
	if n != wantN || since == nil || !since.Time.Equal(wantSince) {
		return fmt.Errorf("unschedulable %d since %v, want %d since %s", n, since, wantN, wantSince)
	}
	return nil
}

func componentsAre(got, want []workv1alpha1.UnschedulableComponent) error {
	if len(got) != len(want) {
		return fmt.Errorf("unschedulable components %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Replicas != want[i].Replicas || !got[i].Since.Equal(&want[i].Since) {
			return fmt.Errorf("unschedulable components %+v, want %+v", got, want)
		}
	}
	return nil
}

// setStatus waits for the Deployment the execution controller applies and
// writes its status as the member's deployment controller would.
func setStatus(t *testing.T, kc kubernetes.Interface, st appsv1.DeploymentStatus) {
	t.Helper()
	ctx := context.Background()
	testenv.Eventually(t, 30*time.Second, "status written", func() error {
		d, err := kc.AppsV1().Deployments("shop").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st.ObservedGeneration = d.Generation
		d.Status = st
		_, err = kc.AppsV1().Deployments("shop").UpdateStatus(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

func readyReplicas(raw []byte) int64 {
	var st struct {
		ReadyReplicas int64 `json:"readyReplicas"`
	}
	_ = json.Unmarshal(raw, &st)
	return st.ReadyReplicas
}

func waitTemplate(t *testing.T, hub client.Client, want map[string]int64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "template status", func() error {
		d := &appsv1.Deployment{}
		if err := hub.Get(context.Background(), types.NamespacedName{Namespace: "shop", Name: "web"}, d); err != nil {
			return err
		}
		got := map[string]int64{"replicas": int64(d.Status.Replicas), "updatedReplicas": int64(d.Status.UpdatedReplicas),
			"readyReplicas": int64(d.Status.ReadyReplicas), "availableReplicas": int64(d.Status.AvailableReplicas),
			"unavailableReplicas": int64(d.Status.UnavailableReplicas)}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("template status %s = %d, want %d (%+v)", k, got[k], v, d.Status)
			}
		}
		return nil
	})
}
