package failover_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

const timeout = 30 * time.Second

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, what, check)
}

// setup creates a namespace holding a ConfigMap template and a binding of
// it placed (Bound) on clusters, with the given failover behaviour.
func setup(t *testing.T, ns string, fo *policyv1alpha1.FailoverBehavior, placement *policyv1alpha1.Placement, clusters ...string) *workv1alpha1.ResourceBinding {
	t.Helper()
	ctx := context.Background()
	if err := cli.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Data: map[string]string{"healthy": "true"}}
	if err := cli.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-configmap"},
		Spec: workv1alpha1.BindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "app", UID: string(cm.UID)},
			Failover:  fo,
			Placement: placement,
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha1.TargetCluster{Name: c, State: workv1alpha1.TargetScheduled})
	}
	if err := cli.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

// setHealth writes the binding's aggregated status as the work status
// controller would: health per cluster, unhealthySince for Unhealthy ones.
func setHealth(t *testing.T, ns string, since metav1.Time, health map[string]policyv1alpha1.ResourceHealth) {
	t.Helper()
	eventually(t, "status written", func() error {
		rb, err := get(ns)
		if err != nil {
			return err
		}
		rb.Status.AggregatedStatus = nil
		for _, c := range slices.Sorted(maps.Keys(health)) {
			item := workv1alpha1.AggregatedStatusItem{ClusterName: c, Applied: true, Health: health[c], FirstCollectedTime: &since, Settled: true}
			if health[c] == policyv1alpha1.ResourceUnhealthy {
				item.UnhealthySince = &since
			}
			rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, item)
		}
		return cli.Status().Update(context.Background(), rb)
	})
}

func get(ns string) (*workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	return rb, cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-configmap"}, rb)
}

// stateOf returns a target's state, "" when the target is gone.
func stateOf(rb *workv1alpha1.ResourceBinding, cluster string) workv1alpha1.TargetState {
	for _, t := range rb.Spec.Clusters {
		if t.Name == cluster {
			if t.State == "" {
				return workv1alpha1.TargetScheduled
			}
			return t.State
		}
	}
	return ""
}

// workExists reports whether the binding's Work for cluster exists.
func workExists(ns, cluster string) (bool, error) {
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: "app-configmap"}
	list := &workv1alpha1.WorkList{}
	if err := cli.List(context.Background(), list, client.InNamespace(names.ExecutionNamespace(cluster))); err != nil {
		return false, err
	}
	for _, w := range list.Items {
		if w.Annotations[workv1alpha1.AnnotationBinding] == ref.String() {
			return true, nil
		}
	}
	return false, nil
}

func waitWork(t *testing.T, ns, cluster string, want bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("Work on %s exists=%v", cluster, want), func() error {
		got, err := workExists(ns, cluster)
		if err == nil && got != want {
			err = fmt.Errorf("exists=%v", got)
		}
		return err
	})
}
