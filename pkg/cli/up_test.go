package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// kubeconfig, join its member, and stop within five seconds of being told to.
//
// Its dashboard's port is taken: up serves the dashboard on a free one and
// prints it.
func TestUpServesTheHubAndStopsQuickly(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out, ctx, cancel, errc := startUp(t, dir, "--members", "1", "--dashboard-listen", busy.Addr().String())
	defer cancel()
	dashboardURL := regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(out.String())
	if dashboardURL == nil || strings.HasSuffix(dashboardURL[1], busy.Addr().String()) {
		t.Errorf("up did not print the dashboard's URL on a free port (%s is taken):\n%s", busy.Addr(), out.String())
	} else if body := httpGet(t, dashboardURL[1]+"/"); !strings.Contains(body, `data-cluster="member1"`) {
		t.Errorf("the dashboard does not show member1:\n%.500s", body)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
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

	members, err := dc.Resource(schema.GroupVersionResource{Group: "cluster.shepherd.io", Version: "v1alpha1", Resource: "clusters"}).List(ctx, metav1.ListOptions{})
	if err != nil || len(members.Items) != 1 || members.Items[0].GetName() != "member1" {
		t.Errorf("want member1 joined as a Cluster, got %v (err %v)", members, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "members", "member1.kubeconfig")); err != nil {
		t.Errorf("member1's kubeconfig was not written: %v", err)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("up returned %v after being stopped:\n%s", err, out.String())
		}
	case <-time.After(shutdownBudget + time.Second):
		t.Fatalf("up did not stop within %s:\n%s", shutdownBudget, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); err != nil {
		t.Errorf("no etcd data kept in the data dir: %v", err)
	}
}

func TestUpRejectsBadFlags(t *testing.T) {
	badFleet := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(badFleet, []byte("members:\n- name: m1\n  nodes: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "70000"}, "--port 70000 is out of range"},
		{[]string{"--members", "-1"}, "--members -1 is out of range"},
		{[]string{"--pull-members", "-1"}, "--pull-members -1 is out of range"},
		{[]string{"--members", "15", "--pull-members", "6"}, "--pull-members 6 is out of range: use 0..5"},
		{[]string{"--fleet", badFleet}, "members[0].nodes"},
		{[]string{"--fleet", "/does/not/exist.yaml"}, "exist.yaml"},
		{[]string{"--dashboard-listen", "8080"}, `--dashboard-listen "8080": want HOST:PORT`},
		{[]string{"--dashboard-listen", "127.0.0.1:99999"}, `port "99999"`},
	} {
		cmd := NewRootCommand()
		cmd.SetArgs(append([]string{"up", "--data-dir", t.TempDir()}, tc.args...))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("up %v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestUpWithoutMembers: --members 0 starts the hub alone, as documented.
// It runs in a process of its own: controller names are unique per
// process, and TestUpServesTheHubAndStopsQuickly starts them here already.
func TestUpWithoutMembers(t *testing.T) {
	if os.Getenv("SHEPHERD_TEST_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUpWithoutMembers$", "-test.v")
		cmd.Env = append(os.Environ(), "SHEPHERD_TEST_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUpWithoutMembers") {
			t.Fatalf("up --members 0 in a child process: %v\n%s", err, tailOf(string(out), 4000))
		}
		return
	}
	dir := t.TempDir()
	out, ctx, cancel, errc := startUp(t, dir, "--members", "0")
	defer cancel()
	if !strings.Contains(out.String(), "with 0 member(s)") {
		t.Errorf("output:\n%s", out.String())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := dc.Resource(schema.GroupVersionResource{Group: "cluster.shepherd.io", Version: "v1alpha1", Resource: "clusters"}).List(ctx, metav1.ListOptions{})
	if err != nil || len(clusters.Items) != 0 {
		t.Errorf("clusters: %v (err %v)", clusters, err)
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
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// startUp runs `shepherd up --data-dir dir ARGS...` until it says it is
// ready, and returns its output, its context's cancel and its result.
// httpGet returns the body of a GET of url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return string(b)
}

func startUp(t *testing.T, dir string, args ...string) (*syncBuffer, context.Context, context.CancelFunc, chan error) {
	t.Helper()
	out := &syncBuffer{}
	cmd := NewRootCommand()
	cmd.SetArgs(append([]string{"up", "--data-dir", dir}, args...))
	cmd.SetOut(out)
	cmd.SetErr(out)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- cmd.ExecuteContext(ctx) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "Press Ctrl-C to stop") {
		select {
		case err := <-errc:
			cancel()
			t.Fatalf("up %v exited early: %v\n%s", args, err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("up %v did not become ready:\n%s", args, out.String())
		}
	}
	return out, ctx, cancel, errc
}
