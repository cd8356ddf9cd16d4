package pull

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// eventually is the suites' one wait (fleetenv).
var eventually = fleetenv.Eventually

// applyYAML server-side applies a YAML stream to the hub.
func applyYAML(t *testing.T, yaml string) { t.Helper(); fleetenv.ApplyYAML(t, hub, "pull-tests", yaml) }

func createNamespace(t *testing.T, name string) { t.Helper(); fleetenv.CreateNamespace(t, hub, name) }

// workload is a Deployment and a PropagationPolicy placing it on clusters
// (Divided by static equal weights).
func workload(ns, name string, replicas int, clusters ...string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - {name: app, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement:
    clusterAffinity: {clusterNames: [%[4]s]}
    replicaScheduling: {replicaSchedulingType: Divided}
`, ns, name, replicas, strings.Join(clusters, ", "))
}

// placement is the binding's replicas per active target cluster (targets
// being removed, state Unscheduled, are left out).
func placement(ns, name string) (map[string]int32, *workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, rb); err != nil {
		return nil, nil, err
	}
	return fleetenv.ActiveTargets(rb.Spec.Clusters), rb, nil
}

// proxy forwards TCP connections to target until cut; restore listens
// again on the same address. It stands for the network between an agent
// and the hub.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection: the hub is unreachable.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore listens again on the same address.
func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}
