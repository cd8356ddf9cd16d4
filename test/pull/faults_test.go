package pull

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// leaseHolder is who holds the Pull member's agent Lease.
func leaseHolder() (string, error) {
	l := &coordinationv1.Lease{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: names.ExecutionNamespace(pullMember), Name: clusterv1alpha1.AgentLeaseName}, l); err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

func readyOf(name string) (*metav1.Condition, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		return nil, err
	}
	r := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if r == nil {
		return nil, fmt.Errorf("no Ready condition")
	}
	return r, nil
}

// startAgent runs another agent for the Pull member until the test ends.
func startAgent(t *testing.T, cfg *rest.Config, identity string) context.CancelFunc {
	t.Helper()
	o := agentOpts
	o.Cluster, o.Identity = pullMember, identity
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := agent.Run(ctx, cfg, fleet.Member(pullMember).RestConfig(), o, testLog.WithName(identity)); err != nil {
			t.Errorf("agent %s: %v", identity, err)
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// Two agents of one cluster: one acts (holds the Lease); the other takes
// over when it stops, and the cluster's Works keep being served.
func TestTwoAgentsOneActs(t *testing.T) {
	first := pullMember + "-agent"
	eventually(t, "the fleet's agent holds the Lease", func() error {
		h, err := leaseHolder()
		if err != nil || h != first {
			return fmt.Errorf("holder %q (%v)", h, err)
		}
		return nil
	})
	stopSecond := startAgent(t, agentCfg, "second")
	// The second agent waits: the Lease stays with the first for several
	// renewals.
	for range 6 {
		time.Sleep(time.Second)
		if h, err := leaseHolder(); err != nil || h != first {
			t.Fatalf("while the first agent runs, the Lease is held by %q (%v)", h, err)
		}
	}
	if err := fleet.StopAgent(pullMember); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second agent takes the Lease", func() error {
		h, err := leaseHolder()
		if err != nil || h != "second" {
			return fmt.Errorf("holder %q (%v)", h, err)
		}
		return nil
	})
	const ns = "pull-two-agents"
	createNamespace(t, ns)
	applyYAML(t, workload(ns, "web", 1, pullMember))
	eventually(t, "the second agent applies a new Work", func() error {
		return memberCl[pullMember].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
	})
	stopSecond()
	if err := fleet.StartAgent(pullMember, agentOpts); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fleet's agent holds the Lease again", func() error {
		h, err := leaseHolder()
		if err != nil || h != first {
			return fmt.Errorf("holder %q (%v)", h, err)
		}
		return nil
	})
}

// An agent that loses the hub for longer than its Lease: the cluster goes
// Unknown on the hub and comes back; nothing is applied twice or deleted.
func TestAgentLosesTheHub(t *testing.T) {
	ctx := context.Background()
	const ns = "pull-lost-hub"
	createNamespace(t, ns)
	applyYAML(t, workload(ns, "web", 2, pullMember))
	d := &appsv1.Deployment{}
	eventually(t, "the Deployment runs in the Pull member", func() error {
		if err := memberCl[pullMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("%d ready", d.Status.ReadyReplicas)
		}
		return nil
	})
	// Let the member's controllers settle, then remember the object.
	time.Sleep(3 * time.Second)
	if err := memberCl[pullMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	before := d.DeepCopy()

	// The fleet's agent gives way to one that reaches the hub through a
	// network the test can cut.
	if err := fleet.StopAgent(pullMember); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fleet.StartAgent(pullMember, agentOpts)
		fleetenv.WaitClusterHealthy(t, hub, pullMember)
	})
	u, err := url.Parse(agentCfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	proxied := rest.CopyConfig(agentCfg)
	proxied.Host = "https://" + p.Addr()
	stop := startAgent(t, proxied, "behind-nat")
	eventually(t, "the proxied agent holds the Lease", func() error {
		h, err := leaseHolder()
		if err != nil || h != "behind-nat" {
			return fmt.Errorf("holder %q (%v)", h, err)
		}
		return nil
	})
	eventually(t, "the cluster is Ready", func() error {
		r, err := readyOf(pullMember)
		if err != nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("%+v (%v)", r, err)
		}
		return nil
	})

	p.Set(fleetenv.LinkCut)
	eventually(t, "the hub sees the cluster Unknown: its agent's Lease expired", func() error {
		r, err := readyOf(pullMember)
		if err != nil || r.Status != metav1.ConditionUnknown || r.Reason != clusterv1alpha1.ReasonAgentLeaseExpired {
			return fmt.Errorf("%+v (%v)", r, err)
		}
		return nil
	})
	time.Sleep(5 * time.Second) // more of the outage: the agent keeps retrying
	p.Set(fleetenv.LinkUp)
	eventually(t, "the cluster is Ready again", func() error {
		r, err := readyOf(pullMember)
		if err != nil || r.Status != metav1.ConditionTrue {
			return fmt.Errorf("%+v (%v)", r, err)
		}
		return nil
	})
	eventually(t, "the Work is Applied again after the agent restarted", func() error {
		w := &workv1alpha1.Work{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: names.ExecutionNamespace(pullMember), Name: ns + ".web-deployment"}, w); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkConditionApplied) {
			return fmt.Errorf("conditions %+v", w.Status.Conditions)
		}
		return nil
	})
	after := &appsv1.Deployment{}
	if err := memberCl[pullMember].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, after); err != nil {
		t.Fatalf("the member's Deployment after the outage: %v", err)
	}
	if after.UID != before.UID || after.Generation != before.Generation {
		t.Errorf("the Deployment was recreated or rewritten: uid %s→%s, generation %d→%d", before.UID, after.UID, before.Generation, after.Generation)
	}
	stop()
}
