package orphans_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/orphans"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// TestSweepAgainstARealMember: in a real member, the sweep removes the
// object whose Work the hub no longer stores (as a leader's late write or
// a lost delete leaves it), and nothing else: not the object of a stored
// Work, not an object without Shepherd's annotation though named like a
// template and labelled like Shepherd's, not one naming another
// cluster's Work, not one a member team edited after Shepherd.
func TestSweepAgainstARealMember(t *testing.T) {
	ctx := context.Background()
	hubEnv := membershiptest.StartHub(t)
	hub := membershiptest.HubClient(t, hubEnv)
	member := membershiptest.StartMember(t, "m1")
	member.Join(t, hub)
	mk := member.Kube(t)

	// The member answers (what the cluster status controller records).
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "m1"}, c); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Probed"})
	if err := hub.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	stored := membershiptest.Work(t, "m1", "shop.kept-configmap", nil, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "kept"}})
	membershiptest.CreateWork(t, hub, stored)

	if _, err := mk.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shepherds := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd}
	create := func(name string, labels map[string]string, work string) *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
		if work != "" {
			cm.Annotations = map[string]string{workv1alpha1.AnnotationWork: work}
		}
		out, err := mk.CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	create("orphan", shepherds, "shepherd-es-m1/shop.orphan-configmap")
	kept := []*corev1.ConfigMap{
		create("kept", shepherds, "shepherd-es-m1/shop.kept-configmap"),
		create("named-like-a-template", shepherds, ""),
		create("another-clusters", shepherds, "shepherd-es-m2/shop.another-clusters-configmap"),
		create("unlabelled", nil, "shepherd-es-m1/shop.unlabelled-configmap"),
	}
	edited := create("edited", shepherds, "shepherd-es-m1/shop.edited-configmap")

	membershiptest.RunManager(t, hubEnv, func(mgr manager.Manager) error {
		d := controllerdeps.Deps{Manager: mgr, Clients: clusterclient.NewCache(mgr.GetClient(), clusterclient.Options{RequestTimeout: 3 * time.Second})}
		return orphans.Setup(d, orphans.Options{Period: 500 * time.Millisecond})
	})
	// An orphan edited while the sweeps run is seen anew (another
	// resourceVersion) and goes once seen twice unchanged.
	edited.Data["k"] = "team"
	if _, err := mk.CoreV1().ConfigMaps("shop").Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitGone(t, mk, "orphan")
	waitGone(t, mk, "edited")
	for _, cm := range kept {
		got, err := mk.CoreV1().ConfigMaps("shop").Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil || got.UID != cm.UID || got.ResourceVersion != cm.ResourceVersion {
			t.Errorf("%s: the sweep touched it (%v)", cm.Name, err)
		}
	}
}

func waitGone(t *testing.T, mk kubernetes.Interface, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := mk.CoreV1().ConfigMaps("shop").Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still in the member after 30s (%v)", name, fmt.Sprint(err))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
