package clusterstatus

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestClusterStatusAgainstRealMembers probes a real member API server,
// stops it, and brings it back on the same data dir and port.
func TestClusterStatusAgainstRealMembers(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	seedMember(t, member.Kube(t))

	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		return Setup(controllerdeps.Deps{Manager: mgr}, Options{ProbeInterval: 300 * time.Millisecond, ProbeTimeout: 2 * time.Second, NotReadyGracePeriod: 2 * time.Second,
			RightsCheckInterval: time.Second})
	})

	begin := time.Now()
	cluster := &clusterv1alpha1.Cluster{}
	testenv.Eventually(t, 30*time.Second, "Ready with summaries", func() error {
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			return err
		}
		if err := readyIs(cluster, metav1.ConditionTrue, ReasonReady); err != nil {
			return err
		}
		if cluster.Status.NodeSummary == nil || cluster.Status.ResourceSummary == nil {
			return fmt.Errorf("no summaries yet")
		}
		return nil
	})
	t.Logf("Ready after %s", time.Since(begin).Round(time.Millisecond))
	st := cluster.Status
	if st.KubernetesVersion == "" || st.LastProbeTime == nil {
		t.Errorf("version %q lastProbeTime %v", st.KubernetesVersion, st.LastProbeTime)
	}
	if !servesDeployments(st.APIEnablements) {
		t.Errorf("apiEnablements lack apps/v1 deployments: %+v", st.APIEnablements)
	}
	if *st.NodeSummary != (clusterv1alpha1.NodeSummary{TotalNum: 2, ReadyNum: 1}) {
		t.Errorf("node summary %+v", st.NodeSummary)
	}
	rs := st.ResourceSummary
	for _, c := range []struct {
		list corev1.ResourceList
		name corev1.ResourceName
		want string
	}{
		{rs.Allocatable, corev1.ResourceCPU, "4"}, {rs.Allocatable, corev1.ResourceMemory, "8Gi"},
		{rs.Allocated, corev1.ResourceCPU, "1500m"}, {rs.Allocated, corev1.ResourcePods, "1"},
		{rs.Allocating, corev1.ResourceCPU, "250m"},
	} {
		if q := c.list[c.name]; q.String() != c.want {
			t.Errorf("resource summary %s = %s, want %s (%+v)", c.name, q.String(), c.want, rs)
		}
	}
	if v := testutil.ToFloat64(clusterReady.WithLabelValues("m1")); v != 1 {
		t.Errorf("shepherd_cluster_ready{cluster=m1} = %v", v)
	}

	t.Run("no status writes while nothing changes", func(t *testing.T) {
		rv := cluster.ResourceVersion
		time.Sleep(2 * time.Second) // ~6 probes
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			t.Fatal(err)
		}
		if cluster.ResourceVersion != rv {
			t.Errorf("Cluster rewritten without change: rv %s -> %s", rv, cluster.ResourceVersion)
		}
	})

	t.Run("a workload report after the probe time gets a probe time after it", func(t *testing.T) {
		// Nothing in the member changes, and the periodic refresh is a
		// minute away: only the report makes the probe write.
		ns := names.ExecutionNamespace("m1")
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "report"},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"x"}}`)}}}}}}
		if err := hub.Create(ctx, work); err != nil {
			t.Fatal(err)
		}
		reported := metav1.NewTime(time.Now().Add(time.Second).Truncate(time.Second))
		work.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
			Identifier: workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "x"},
			StatusTime: &reported,
		}}
		if err := hub.Status().Update(ctx, work); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "lastProbeTime after the report", func() error {
			if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
				return err
			}
			if lp := cluster.Status.LastProbeTime; lp == nil || !lp.After(reported.Time) {
				return fmt.Errorf("lastProbeTime %v, report at %v", lp, reported)
			}
			return nil
		})
		// Then quiet again: the report is older than the probe time now.
		rv := cluster.ResourceVersion
		time.Sleep(2 * time.Second)
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			t.Fatal(err)
		}
		if cluster.ResourceVersion != rv {
			t.Errorf("Cluster rewritten after the probe time passed the report: rv %s -> %s", rv, cluster.ResourceVersion)
		}
	})

	// A user taint must survive the controller's taint changes.
	cluster.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
	if err := hub.Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}

	member.Stop(t)
	stopped := time.Now()
	testenv.Eventually(t, 15*time.Second, "Unknown/Unreachable", func() error {
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			return err
		}
		return readyIs(cluster, metav1.ConditionUnknown, ReasonUnreachable)
	})
	t.Logf("Unreachable after %s: %s", time.Since(stopped).Round(time.Millisecond),
		meta.FindStatusCondition(cluster.Status.Conditions, "Ready").Message)
	// No "not tainted yet" check here: a stopping member answers NotReady
	// first, and under load that phase can outlast the grace period, after
	// which the taint legitimately switches keys at once. TestDesiredTaints
	// covers the grace period exactly.
	testenv.Eventually(t, 15*time.Second, "unreachable taint", func() error {
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			return err
		}
		if !hasTaint(cluster, clusterv1alpha1.TaintClusterUnreachable) {
			return fmt.Errorf("taints %v", cluster.Spec.Taints)
		}
		return nil
	})
	t.Logf("tainted after %s", time.Since(stopped).Round(time.Millisecond))
	if !hasTaint(cluster, "dedicated") || cluster.Status.NodeSummary == nil || cluster.Status.KubernetesVersion == "" {
		t.Errorf("lost the user taint or the last known facts: %+v %+v", cluster.Spec.Taints, cluster.Status)
	}
	if v := testutil.ToFloat64(clusterReady.WithLabelValues("m1")); v != 0 {
		t.Errorf("shepherd_cluster_ready{cluster=m1} = %v while unreachable", v)
	}

	member.Start(t)
	restarted := time.Now()
	testenv.Eventually(t, 30*time.Second, "recovery", func() error {
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			return err
		}
		if err := readyIs(cluster, metav1.ConditionTrue, ReasonReady); err != nil {
			return err
		}
		// A restarting member answers NotReady for a moment, which swaps
		// the taint's key; the status and the taints are two writes.
		if hasTaint(cluster, clusterv1alpha1.TaintClusterUnreachable) || hasTaint(cluster, clusterv1alpha1.TaintClusterNotReady) {
			return fmt.Errorf("still tainted: %v", cluster.Spec.Taints)
		}
		return nil
	})
	t.Logf("recovered %s after restart", time.Since(restarted).Round(time.Millisecond))
	if len(cluster.Spec.Taints) != 1 || cluster.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints after recovery: %v", cluster.Spec.Taints)
	}
	wantEvents(t, hub, "ClusterReady", "ClusterUnreachable", "TaintAdded", "TaintRemoved")

	t.Run("the hub's ServiceAccount token is renewed before it expires", func(t *testing.T) {
		key := types.NamespacedName{Namespace: "shepherd-system", Name: "m1"}
		sec := &corev1.Secret{}
		if err := hub.Get(ctx, key, sec); err != nil {
			t.Fatal(err)
		}
		oldToken := tokenOf(t, sec)
		if _, ok := clusterclient.TokenExpiry(oldToken); !ok {
			t.Fatalf("join did not store a ServiceAccount token")
		}
		// As if the token were about to expire.
		patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`,
			clusterv1alpha1.AnnotationTokenExpiry, time.Now().Add(time.Minute).UTC().Format(time.RFC3339))))
		if err := hub.Patch(ctx, sec, patch); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "token renewed", func() error {
			if err := hub.Get(ctx, key, sec); err != nil {
				return err
			}
			if tokenOf(t, sec) == oldToken {
				return fmt.Errorf("same token")
			}
			exp, err := time.Parse(time.RFC3339, sec.Annotations[clusterv1alpha1.AnnotationTokenExpiry])
			if err != nil || time.Until(exp) < time.Hour {
				return fmt.Errorf("expiry %q", sec.Annotations[clusterv1alpha1.AnnotationTokenExpiry])
			}
			return nil
		})
		testenv.Eventually(t, 10*time.Second, "still Ready with the new token", func() error {
			if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
				return err
			}
			return readyIs(cluster, metav1.ConditionTrue, ReasonReady)
		})
	})

	t.Run("missing rights show on the Cluster", func(t *testing.T) {
		authorizedIs := func(want metav1.ConditionStatus) func() error {
			return func() error {
				if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
					return err
				}
				c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionAuthorized)
				if c == nil || c.Status != want {
					return fmt.Errorf("Authorized = %+v", c)
				}
				return nil
			}
		}
		testenv.Eventually(t, 10*time.Second, "Authorized=True", authorizedIs(metav1.ConditionTrue))
		mk := member.Kube(t)
		crb, err := mk.RbacV1().ClusterRoleBindings().Get(ctx, clusterclient.MemberClusterRole, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := mk.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 15*time.Second, "Authorized=False", authorizedIs(metav1.ConditionFalse))
		if c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionAuthorized); !strings.Contains(c.Message, "create deployments.apps") {
			t.Errorf("message: %s", c.Message)
		}
		crb.ResourceVersion, crb.UID = "", ""
		if _, err := mk.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 15*time.Second, "Authorized=True again", authorizedIs(metav1.ConditionTrue))
		testenv.Eventually(t, 15*time.Second, "Ready again", func() error {
			if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
				return err
			}
			return readyIs(cluster, metav1.ConditionTrue, ReasonReady)
		})
	})

	t.Run("a member answering with another identity is not Ready", func(t *testing.T) {
		if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
			t.Fatal(err)
		}
		joined := cluster.Spec.ID
		if joined == "" {
			t.Fatal("join recorded no identity")
		}
		setID := func(id string) {
			t.Helper()
			patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"id":%q}}`, id)))
			if err := hub.Patch(ctx, cluster, patch); err != nil {
				t.Fatal(err)
			}
		}
		// As if the endpoint and credentials now reached another cluster.
		setID("00000000-0000-0000-0000-000000000000")
		testenv.Eventually(t, 10*time.Second, "Ready=False (IdentityMismatch)", func() error {
			if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
				return err
			}
			return readyIs(cluster, metav1.ConditionFalse, ReasonIdentityMismatch)
		})
		setID(joined)
		testenv.Eventually(t, 10*time.Second, "Ready again", func() error {
			if err := hub.Get(ctx, types.NamespacedName{Name: "m1"}, cluster); err != nil {
				return err
			}
			return readyIs(cluster, metav1.ConditionTrue, ReasonReady)
		})
	})

	t.Run("deleting the Cluster stops probing", func(t *testing.T) {
		if err := hub.Delete(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "metric removed", func() error {
			if n := testutil.CollectAndCount(clusterReady); n != 0 {
				return fmt.Errorf("%d shepherd_cluster_ready series", n)
			}
			return nil
		})
	})
}

func tokenOf(t *testing.T, sec *corev1.Secret) string {
	t.Helper()
	kc, err := clientcmd.Load(sec.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	return kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].Token
}

// seedMember creates what a member's kubelets and scheduler would: a Ready
// node with allocatable resources, a NotReady one, a pod bound to a node
// and a pending one.
func seedMember(t *testing.T, kc kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for name, ready := range map[string]corev1.ConditionStatus{"n1": corev1.ConditionTrue, "n2": corev1.ConditionFalse} {
		n, err := kc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Allocatable = rl("cpu", "4", "memory", "8Gi", "pods", "110")
		n.Status.Capacity = n.Status.Allocatable
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
		if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The ServiceAccount admission plugin wants the default account, which
	// the (absent) serviceaccount controller would create.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for name, nodeName := range map[string]string{"bound": "n1", "pending": ""} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: rl("cpu", map[string]string{"bound": "1500m", "pending": "250m"}[name])},
		}}}}
		if _, err := kc.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func readyIs(c *clusterv1alpha1.Cluster, status metav1.ConditionStatus, reason string) error {
	cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if cond == nil || cond.Status != status || cond.Reason != reason {
		return fmt.Errorf("Ready condition %+v, want %s/%s", cond, status, reason)
	}
	return nil
}

func hasTaint(c *clusterv1alpha1.Cluster, key string) bool {
	for _, t := range c.Spec.Taints {
		if t.Key == key && t.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func servesDeployments(apis []clusterv1alpha1.APIEnablement) bool {
	for _, a := range apis {
		for _, r := range a.Resources {
			if a.GroupVersion == "apps/v1" && r.Name == "deployments" && r.Kind == "Deployment" {
				return true
			}
		}
	}
	return false
}

func wantEvents(t *testing.T, hub client.Client, reasons ...string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "events", func() error {
		list := &eventsv1.EventList{}
		if err := hub.List(context.Background(), list); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Cluster" && e.Regarding.Name == "m1" {
				seen[e.Reason] = true
			}
		}
		for _, r := range reasons {
			if !seen[r] {
				return fmt.Errorf("no %s event; seen %v", r, seen)
			}
		}
		return nil
	})
}
