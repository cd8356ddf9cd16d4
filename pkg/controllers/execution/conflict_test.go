package execution_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/execution"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// teamConfigMap is a ConfigMap a member team created itself, in the member.
func teamConfigMap(t *testing.T, mk kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	ctx := context.Background()
	if _, err := mk.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	cm, err := mk.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"owner": "member-team"}},
		Data:       map[string]string{"k": "team"},
	}, metav1.CreateOptions{FieldManager: "member-team"})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// unchanged fails unless the member object is exactly the one given.
func unchanged(t *testing.T, mk kubernetes.Interface, want *corev1.ConfigMap) {
	t.Helper()
	got, err := mk.CoreV1().ConfigMaps(want.Namespace).Get(context.Background(), want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the team's ConfigMap: %v", err)
	}
	if got.ResourceVersion != want.ResourceVersion || got.UID != want.UID || !equality.Semantic.DeepEqual(got.Labels, want.Labels) ||
		!equality.Semantic.DeepEqual(got.Annotations, want.Annotations) || !equality.Semantic.DeepEqual(got.Data, want.Data) {
		t.Fatalf("the team's ConfigMap changed:\n got %+v\nwant %+v", got.ObjectMeta, want.ObjectMeta)
	}
}

// TestConflictResolution: a member object Shepherd did not create for a
// Work is never modified or deleted under Abort; Overwrite adopts it;
// preserved objects are released, not deleted; suspension holds a Work.
func TestConflictResolution(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	mk := member.Kube(t)

	var hookMu sync.Mutex
	var hook func(name string)
	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		opts := execution.Options{Workers: 2, RetryBaseDelay: 100 * time.Millisecond, ResyncPeriod: time.Second}
		return execution.SetupWithBeforeCreate(d, opts, func(name string) {
			hookMu.Lock()
			defer hookMu.Unlock()
			if hook != nil {
				hook(name)
			}
		})
	})

	conflictOf := func(t *testing.T, w *workv1alpha1.Work) string {
		t.Helper()
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionFalse, execution.ReasonConflict)
		return meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied).Message
	}

	t.Run("Abort leaves the team's object untouched, also when the Work goes", func(t *testing.T) {
		team := teamConfigMap(t, mk, "abort", "settings")
		w := membershiptest.Work(t, "m1", "abort", nil, configMap("abort", "settings"), configMap("abort", "mine"))
		membershiptest.CreateWork(t, hub, w)
		msg := conflictOf(t, w)
		for _, want := range []string{"v1 ConfigMap abort/settings", "cluster m1", "not created by Shepherd", "conflictResolution: Overwrite"} {
			if !strings.Contains(msg, want) {
				t.Errorf("conflict message %q lacks %q", msg, want)
			}
		}
		if _, err := mk.CoreV1().ConfigMaps("abort").Get(ctx, "mine", metav1.GetOptions{}); err != nil {
			t.Errorf("the Work's other manifest was not applied: %v", err)
		}
		// The resync re-checks the conflict and still changes nothing.
		time.Sleep(1500 * time.Millisecond)
		unchanged(t, mk, team)
		if err := hub.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "Work released", func() error { return gone(nil, hub.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{})) })
		unchanged(t, mk, team)
		if err := gone(mk.CoreV1().ConfigMaps("abort").Get(ctx, "mine", metav1.GetOptions{})); err != nil {
			t.Errorf("the Work's own ConfigMap: %v", err)
		}
	})

	t.Run("an object created by someone else while the Work is applied is not touched", func(t *testing.T) {
		var team *corev1.ConfigMap
		hookMu.Lock()
		hook = func(name string) {
			if name == "raced" && team == nil {
				team = teamConfigMap(t, mk, "race", "raced")
			}
		}
		hookMu.Unlock()
		defer func() { hookMu.Lock(); hook = nil; hookMu.Unlock() }()
		w := membershiptest.Work(t, "m1", "race", nil, configMap("race", "raced"))
		membershiptest.CreateWork(t, hub, w)
		conflictOf(t, w)
		unchanged(t, mk, team)
	})

	t.Run("an object the Work created survives a lost status write", func(t *testing.T) {
		// The object carries the Work's annotation, as if the controller
		// created it and stopped before writing the Work's status.
		obj := configMap("restart", "made")
		obj.Annotations = map[string]string{workv1alpha1.AnnotationWork: "shepherd-es-m1/restart"}
		teamConfigMap(t, mk, "restart", "unused") // creates the namespace
		if _, err := mk.CoreV1().ConfigMaps("restart").Create(ctx, obj, metav1.CreateOptions{FieldManager: workv1alpha1.FieldManager}); err != nil {
			t.Fatal(err)
		}
		w := membershiptest.Work(t, "m1", "restart", nil, configMap("restart", "made"))
		membershiptest.CreateWork(t, hub, w)
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
	})

	t.Run("Overwrite adopts the object, which then goes with the Work", func(t *testing.T) {
		team := teamConfigMap(t, mk, "adopt", "settings")
		w := membershiptest.Work(t, "m1", "adopt", nil, configMap("adopt", "settings"))
		w.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
		membershiptest.CreateWork(t, hub, w)
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		got, err := mk.CoreV1().ConfigMaps("adopt").Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.UID != team.UID || got.Data["k"] != "v" || got.Annotations[workv1alpha1.AnnotationWork] != "shepherd-es-m1/adopt" {
			t.Fatalf("adopted object: %+v %v", got.ObjectMeta, got.Data)
		}
		if err := hub.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "adopted object deleted", func() error {
			return gone(mk.CoreV1().ConfigMaps("adopt").Get(ctx, "settings", metav1.GetOptions{}))
		})
	})

	t.Run("Overwrite never takes an object from another existing Work", func(t *testing.T) {
		owner := membershiptest.Work(t, "m1", "first", nil, configMap("shared", "one"))
		membershiptest.CreateWork(t, hub, owner)
		waitApplied(t, hub, client.ObjectKeyFromObject(owner), owner, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		before, err := mk.CoreV1().ConfigMaps("shared").Get(ctx, "one", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		second := membershiptest.Work(t, "m1", "second", nil, configMap("shared", "one"))
		second.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
		membershiptest.CreateWork(t, hub, second)
		if msg := conflictOf(t, second); !strings.Contains(msg, "belongs to Work shepherd-es-m1/first, which still exists") {
			t.Errorf("message: %s", msg)
		}
		unchanged(t, mk, before)
	})

	t.Run("preserved objects stay, without Shepherd's label and annotation", func(t *testing.T) {
		w := membershiptest.Work(t, "m1", "keep", nil, configMap("keep", "kept"))
		w.Spec.PreserveResourcesOnDeletion = true
		membershiptest.CreateWork(t, hub, w)
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		if err := hub.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "Work released", func() error { return gone(nil, hub.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{})) })
		got, err := mk.CoreV1().ConfigMaps("keep").Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("preserved ConfigMap: %v", err)
		}
		if _, ok := got.Labels[workv1alpha1.LabelManagedBy]; ok {
			t.Errorf("labels %v", got.Labels)
		}
		if _, ok := got.Annotations[workv1alpha1.AnnotationWork]; ok {
			t.Errorf("annotations %v", got.Annotations)
		}
		if got.Data["k"] != "v" {
			t.Errorf("data %v", got.Data)
		}
	})

	t.Run("nothing is applied to a member answering with another identity", func(t *testing.T) {
		setReady := func(status metav1.ConditionStatus, reason string) {
			t.Helper()
			c := &clusterv1alpha1.Cluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "m1"}, c); err != nil {
				t.Fatal(err)
			}
			meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: reason, Message: "test: " + reason})
			if err := hub.Status().Update(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		setReady(metav1.ConditionFalse, clusterv1alpha1.ReasonIdentityMismatch)
		w := membershiptest.Work(t, "m1", "elsewhere", nil, configMap("elsewhere", "x"))
		membershiptest.CreateWork(t, hub, w)
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionFalse, execution.ReasonClusterIdentityMismatch)
		if err := gone(mk.CoreV1().ConfigMaps("elsewhere").Get(ctx, "x", metav1.GetOptions{})); err != nil {
			t.Fatalf("applied to a member with another identity: %v", err)
		}
		setReady(metav1.ConditionTrue, "Ready")
		waitApplied(t, hub, client.ObjectKeyFromObject(w), w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
	})

	t.Run("a suspended Work applies nothing until lifted", func(t *testing.T) {
		w := membershiptest.Work(t, "m1", "held", nil, configMap("held", "later"))
		w.Spec.SuspendDispatching = true
		membershiptest.CreateWork(t, hub, w)
		key := client.ObjectKeyFromObject(w)
		testenv.Eventually(t, 10*time.Second, "Dispatching=False", func() error {
			if err := hub.Get(ctx, key, w); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionDispatching); c == nil || c.Status != metav1.ConditionFalse || c.Reason != execution.ReasonSuspended {
				return fmt.Errorf("Dispatching = %+v", c)
			}
			return nil
		})
		if err := gone(mk.CoreV1().ConfigMaps("held").Get(ctx, "later", metav1.GetOptions{})); err != nil {
			t.Fatalf("applied while suspended: %v", err)
		}
		mustUpdate(t, hub, key, func(w *workv1alpha1.Work) { w.Spec.SuspendDispatching = false })
		waitApplied(t, hub, key, w, metav1.ConditionTrue, execution.ReasonAppliedSuccessful)
		if meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionDispatching) != nil {
			t.Errorf("Dispatching condition left after lifting: %+v", w.Status.Conditions)
		}
		if _, err := mk.CoreV1().ConfigMaps("held").Get(ctx, "later", metav1.GetOptions{}); err != nil {
			t.Errorf("not applied after lifting: %v", err)
		}
	})
}
