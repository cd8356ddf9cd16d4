package agent

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// gate is a TCP proxy to target at addr, which refuses connections until
// opened: a hub whose address answers nothing, as while it restarts.
type gate struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	wg           sync.WaitGroup
}

// newGate reserves a free port for a closed gate.
func newGate(t *testing.T, target string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: ln.Addr().String(), target: target}
	_ = ln.Close()
	t.Cleanup(g.close)
	return g
}

func (g *gate) open(t *testing.T) {
	g.mu.Lock()
	defer g.mu.Unlock()
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	g.ln = ln
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", g.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		_ = g.ln.Close()
		g.ln = nil
	}
	g.wg.Wait()
}

// TestRunWaitsForTheHub starts an agent while its hub does not answer: Run
// keeps asking instead of returning (nothing may restart the agent), and
// once the hub answers the agent takes its Lease and serves its cluster.
// Credentials the hub rejects still end Run at once: waiting cannot mend
// them.
func TestRunWaitsForTheHub(t *testing.T) {
	testenv.Heavy(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cluster = "edge-1"
	hub, admin, reg := registeredHub(t, cluster)
	agentHub, err := clientcmd.RESTConfigFromKubeConfig(reg.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(agentHub.Host)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(t, u.Host)
	agentHub.Host = "https://" + g.addr

	// Rejected credentials: Run returns once the hub has refused them for
	// HubGrace, saying what to run.
	bad := *agentHub
	bad.BearerToken = "not-a-token"
	g.open(t)
	opts := Options{Cluster: cluster, Identity: "edge-1-agent", RestartDelay: 100 * time.Millisecond, HubGrace: 500 * time.Millisecond}
	if err := Run(ctx, &bad, hub.Config, opts, testr.New(t)); err == nil || !strings.Contains(err.Error(), "rejects the agent's credentials") {
		t.Errorf("Run with credentials the hub rejects: %v, want an error saying so", err)
	}
	g.close()

	done := make(chan error, 1)
	go func() { done <- Run(ctx, agentHub, hub.Config, opts, testr.New(t)) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned while the hub did not answer: %v", err)
	case <-time.After(time.Second):
	}
	g.open(t)
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: clusterv1alpha1.AgentLeaseName}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, key, lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == opts.Identity, nil
	})
	if err != nil {
		t.Fatalf("the agent did not take its Lease once the hub answered: %v (lease %+v)", err, lease.Spec)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: %v, want nil", err)
	}
}
