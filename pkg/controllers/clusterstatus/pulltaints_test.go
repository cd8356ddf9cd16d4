package clusterstatus

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// TestPullTaintGraceUnderClockSkew: a Pull cluster's agent reports Ready
// False, stamped on its clock, which is two probe intervals or two grace
// periods behind or ahead of the hub's. The hub taints it one full grace period after it saw the
// transition, on its own clock: not at once (behind), not a skew later
// (ahead). Compared with the hub's clock, the agent's lastTransitionTime
// would have tainted a cluster whose agent is behind on first sight.
func TestPullTaintGraceUnderClockSkew(t *testing.T) {
	const grace = DefaultNotReadyGracePeriod
	for _, tc := range []struct {
		name string
		skew time.Duration // the agent's clock minus the hub's
	}{
		{"the agent's clock right", 0},
		{"the agent's clock two probe intervals behind", -2 * DefaultProbeInterval},
		{"the agent's clock two probe intervals ahead", 2 * DefaultProbeInterval},
		{"the agent's clock two graces behind", -2 * grace},
		{"the agent's clock two graces ahead", 2 * grace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := testingclock.NewFakePassiveClock(hubNow)
			const name = "edge-1"
			cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
			l := lease("agent-a", hubNow.Add(tc.skew), 40)
			l.Namespace, l.Name = names.ExecutionNamespace(name), clusterv1alpha1.AgentLeaseName
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cluster, l).WithStatusSubresource(cluster).Build()
			r := &Reconciler{Client: c, Recorder: events.NewFakeRecorder(100), Options: Options{NoExecuteGracePeriod: -1}.withDefaults(),
				clients: clusterclient.NewCache(c, clusterclient.Options{}), clock: hub, summaries: newSummarizers()}
			ctx := context.Background()

			// agent writes, on its clock, what it would at the hub's
			// time since the start: a renewal, and Ready when it changes.
			agent := func(at time.Duration, ready metav1.ConditionStatus) {
				t.Helper()
				hub.SetTime(hubNow.Add(at))
				agentNow := hubNow.Add(at + tc.skew)
				if err := c.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
					t.Fatal(err)
				}
				l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(agentNow))
				if err := c.Update(ctx, l); err != nil {
					t.Fatal(err)
				}
				got := &clusterv1alpha1.Cluster{}
				if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
					t.Fatal(err)
				}
				meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: ready,
					Reason: "Probed", LastTransitionTime: metav1.NewTime(agentNow)})
				if err := c.Status().Update(ctx, got); err != nil {
					t.Fatal(err)
				}
			}
			tainted := func() bool {
				t.Helper()
				if _, err := r.reconcilePull(ctx, logr.Discard(), mustGet(t, c, name)); err != nil {
					t.Fatal(err)
				}
				return len(mustGet(t, c, name).Spec.Taints) > 0
			}

			agent(0, metav1.ConditionTrue)
			if tainted() {
				t.Fatal("tainted while Ready")
			}
			agent(10*time.Second, metav1.ConditionFalse) // the hub sees it at 10 s
			if tainted() {
				t.Fatal("tainted as soon as the hub saw it not Ready")
			}
			agent(10*time.Second+grace-time.Second, metav1.ConditionFalse)
			if tainted() {
				t.Fatal("tainted a second before its grace period ended")
			}
			agent(10*time.Second+grace, metav1.ConditionFalse)
			if !tainted() {
				t.Fatal("not tainted once its grace period ended")
			}
		})
	}
}

func mustGet(t *testing.T, c client.Client, name string) *clusterv1alpha1.Cluster {
	t.Helper()
	got := &clusterv1alpha1.Cluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
		t.Fatal(err)
	}
	return got
}
