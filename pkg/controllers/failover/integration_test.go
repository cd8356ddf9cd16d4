package failover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/failover"
)

const (
	healthy   = policyv1alpha1.ResourceHealthy
	unhealthy = policyv1alpha1.ResourceUnhealthy
	unknown   = policyv1alpha1.ResourceUnknown
)

func appFailover(toleration int32, purge policyv1alpha1.PurgeMode, grace *int32) *policyv1alpha1.FailoverBehavior {
	return &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(toleration)},
		PurgeMode:          purge, GracePeriodSeconds: grace, BlockPredecessorSeconds: ptr.To[int32](600),
	}}
}

// TestRestartKeepsTheClock stops the controllers in the middle of the
// toleration and starts new ones: unhealthySince is untouched and the
// eviction happens at the original deadline.
func TestRestartKeepsTheClock(t *testing.T) {
	suite.Hub(t)
	const ns = "restart"
	const toleration = 6
	setup(t, ns, appFailover(toleration, policyv1alpha1.PurgeImmediately, nil), nil, "a1", "a2")
	stop := startManager(t)
	waitWork(t, ns, "a1", true)
	since := metav1.NewTime(time.Now().Truncate(time.Second))
	setHealth(t, ns, since, map[string]policyv1alpha1.ResourceHealth{"a1": unhealthy, "a2": healthy})
	deadline := since.Add(toleration * time.Second)

	time.Sleep(2 * time.Second)
	stop()
	rb, err := get(ns)
	if err != nil {
		t.Fatal(err)
	}
	if stateOf(rb, "a1") == workv1alpha1.TargetUnscheduled {
		t.Fatal("evicted before the toleration ended")
	}
	startManager(t)
	eventually(t, "a1 evicted", func() error {
		rb, err = get(ns)
		if err == nil && len(rb.Spec.EvictionHistory) == 0 {
			err = fmt.Errorf("no eviction yet; targets %+v", rb.Spec.Clusters)
		}
		return err
	})
	if got := rb.Status.AggregatedStatus[0].UnhealthySince; !got.Equal(&since) {
		t.Errorf("unhealthySince moved from %s to %s", since, got)
	}
	h := rb.Spec.EvictionHistory[0]
	if h.ClusterName != "a1" || h.Reason != failover.ReasonApplicationFailure {
		t.Errorf("history %+v", h)
	}
	if off := h.EvictedAt.Sub(deadline); off < -time.Second || off > time.Second {
		t.Errorf("evicted at %s, %s off the deadline %s", h.EvictedAt, off, deadline)
	}
	if len(rb.Spec.GracefulEvictionTasks) != 0 {
		t.Errorf("purge mode Immediately left tasks %+v", rb.Spec.GracefulEvictionTasks)
	}
	waitWork(t, ns, "a1", false)
	waitWork(t, ns, "a2", true)
}

// TestPurgeNeverWaitsForConfirmation: the old copy's Work stays, the
// binding says it waits, and a confirmation lets it go.
func TestPurgeNeverWaitsForConfirmation(t *testing.T) {
	suite.Hub(t)
	const ns = "never"
	setup(t, ns, appFailover(1, policyv1alpha1.PurgeNever, nil), nil, "n1", "n2")
	startManager(t)
	waitWork(t, ns, "n1", true)
	setHealth(t, ns, metav1.NewTime(time.Now().Truncate(time.Second)), map[string]policyv1alpha1.ResourceHealth{"n1": unhealthy, "n2": healthy})
	eventually(t, "eviction pending confirmation", func() error {
		rb, err := get(ns)
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, failover.ConditionEvictionPending)
		if c == nil || c.Reason != failover.ReasonAwaitingConfirmation || stateOf(rb, "n1") != workv1alpha1.TargetUnscheduled {
			return fmt.Errorf("condition %+v targets %+v", c, rb.Spec.Clusters)
		}
		return nil
	})
	time.Sleep(time.Second)
	waitWork(t, ns, "n1", true)
	eventually(t, "confirmed", func() error {
		rb, err := get(ns)
		if err != nil {
			return err
		}
		rb.Spec.GracefulEvictionTasks[0].Confirmed = true
		return cli.Update(context.Background(), rb)
	})
	waitWork(t, ns, "n1", false)
	eventually(t, "task and condition gone, target removed", func() error {
		rb, err := get(ns)
		if err == nil && (len(rb.Spec.GracefulEvictionTasks) > 0 || meta.FindStatusCondition(rb.Status.Conditions, failover.ConditionEvictionPending) != nil || stateOf(rb, "n1") != "") {
			err = fmt.Errorf("tasks %+v conditions %+v targets %+v", rb.Spec.GracefulEvictionTasks, rb.Status.Conditions, rb.Spec.Clusters)
		}
		return err
	})
}

// TestPurgeGraciously: the old copy stays while the new clusters are not
// Healthy, and goes when the grace period ends.
func TestPurgeGraciously(t *testing.T) {
	suite.Hub(t)
	const ns = "graciously"
	setup(t, ns, appFailover(1, policyv1alpha1.PurgeGraciously, ptr.To[int32](4)), nil, "g1", "g2")
	startManager(t)
	waitWork(t, ns, "g1", true)
	setHealth(t, ns, metav1.NewTime(time.Now().Truncate(time.Second)), map[string]policyv1alpha1.ResourceHealth{"g1": unhealthy, "g2": unknown})
	var evictedAt time.Time
	eventually(t, "graceful eviction task", func() error {
		rb, err := get(ns)
		if err == nil && len(rb.Spec.GracefulEvictionTasks) != 1 {
			err = fmt.Errorf("tasks %+v", rb.Spec.GracefulEvictionTasks)
		}
		if err == nil {
			task := rb.Spec.GracefulEvictionTasks[0]
			if task.FromCluster != "g1" || task.Producer != failover.Producer || task.PurgeMode != policyv1alpha1.PurgeGraciously || *task.GracePeriodSeconds != 4 {
				err = fmt.Errorf("task %+v", task)
			}
			evictedAt = task.CreationTimestamp.Time
		}
		return err
	})
	waitWork(t, ns, "g1", true)
	waitWork(t, ns, "g1", false)
	if took := time.Since(evictedAt); took < 3*time.Second {
		t.Errorf("old copy removed %s after the eviction, before the 4 s grace period", took)
	}
}

// TestClusterFailover taints a cluster NoExecute: a binding that does not
// tolerate it leaves at once, one tolerating it for 3 s leaves after that.
func TestClusterFailover(t *testing.T) {
	suite.Hub(t)
	ctx := context.Background()
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:6443",
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "broken"},
		},
	}
	if err := cli.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	tolerating := &policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{
		Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](3),
	}}}
	setup(t, "cf-plain", nil, nil, "broken", "fine")
	setup(t, "cf-tolerating", nil, tolerating, "broken", "fine")
	startManager(t)
	waitWork(t, "cf-plain", "broken", true)

	added := metav1.NewTime(time.Now().Truncate(time.Second))
	c.Spec.Taints = []corev1.Taint{{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}}
	if err := cli.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	evictedAt := func(ns string) time.Time {
		var at time.Time
		eventually(t, ns+" evicted from broken", func() error {
			rb, err := get(ns)
			if err == nil && (len(rb.Spec.EvictionHistory) == 0 || (stateOf(rb, "broken") != workv1alpha1.TargetUnscheduled && stateOf(rb, "broken") != "")) {
				err = fmt.Errorf("targets %+v", rb.Spec.Clusters)
			}
			if err == nil {
				at = rb.Spec.EvictionHistory[0].EvictedAt.Time
				if r := rb.Spec.EvictionHistory[0].Reason; r != failover.ReasonTaintUntolerated {
					err = fmt.Errorf("reason %s", r)
				}
			}
			return err
		})
		return at
	}
	if at := evictedAt("cf-plain"); at.Sub(added.Time) > 2*time.Second {
		t.Errorf("untolerating binding evicted %s after the taint", at.Sub(added.Time))
	}
	if at := evictedAt("cf-tolerating"); at.Sub(added.Time) < 3*time.Second-time.Second/2 {
		t.Errorf("tolerating binding evicted %s after the taint, before its 3 s", at.Sub(added.Time))
	}
	waitWork(t, "cf-plain", "broken", false)
}
