package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// syncBuffer is a bytes.Buffer safe for the command's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpServesTheHubAndStopsQuickly runs `shepherd up` as a user would: it
// must print how to use kubectl, serve Shepherd's kinds through the written
// kubeconfig, and stop within five seconds of being told to.
func TestUpServesTheHubAndStopsQuickly(t *testing.T) {
	dir := t.TempDir()
	var out syncBuffer
	cmd := NewRootCommand()
	cmd.SetArgs([]string{"up", "--data-dir", dir})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- cmd.ExecuteContext(ctx) }()

	kubeconfig := filepath.Join(dir, "kubeconfig")
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "Press Ctrl-C to stop") {
		select {
		case err := <-errc:
			t.Fatalf("up exited early: %v\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("up did not become ready:\n%s", out.String())
		}
	}
	if !strings.Contains(out.String(), "export KUBECONFIG="+kubeconfig) {
		t.Errorf("up did not print how to use kubectl:\n%s", out.String())
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "cluster.shepherd.io", Version: "v1alpha1", Resource: "clusters"},
		{Group: "policy.shepherd.io", Version: "v1alpha1", Resource: "propagationpolicies"},
	} {
		if _, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("listing %s through the kubeconfig: %v", gvr.Resource, err)
		}
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("up returned %v after being stopped", err)
		}
	case <-time.After(shutdownBudget + time.Second):
		t.Fatalf("up did not stop within %s", shutdownBudget)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		t.Errorf("no etcd data kept in the data dir: %v", err)
	}
}

func TestUpRejectsBadFlags(t *testing.T) {
	cmd := NewRootCommand()
	cmd.SetArgs([]string{"up", "--port", "70000", "--data-dir", t.TempDir()})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--port 70000 is out of range") {
		t.Fatalf("want a --port error, got %v", err)
	}
}
