package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
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
	testenv.Heavy(t)
	// Parallel beside the restart test (see inProcess).
	t.Parallel()
	inProcess.Lock()
	t.Cleanup(inProcess.Unlock)
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
		{[]string{"--scheduler-config", badSchedulerConfig(t)}, "scheduler.yaml: profiles[0].plugins.score.enabled[0].weight: must be between 1 and"},
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
	testenv.Heavy(t)
	// Parallel beside the restart test (see inProcess).
	t.Parallel()
	inProcess.Lock()
	t.Cleanup(inProcess.Unlock)
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

// runAsShepherdEnv makes this test binary run as `shepherd` with its
// arguments (see TestMain): a `shepherd up` a test can kill.
const runAsShepherdEnv = "SHEPHERD_CLI_TEST_RUN_AS_SHEPHERD"

func TestMain(m *testing.M) {
	if os.Getenv(runAsShepherdEnv) == "1" {
		// As cmd/shepherd's main.
		pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
		cmd := NewRootCommand()
		cmd.SetArgs(os.Args[1:])
		if err := cmd.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// upProcess is `shepherd up` running in a process of its own.
type upProcess struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

// inProcess is held by each parallel test that runs commands and control
// planes in this process: they share its logging and metrics registry, so
// they run one at a time, beside TestUpRestartsWithTheSameDataDir, whose
// `shepherd up` runs in a process of its own.
var inProcess sync.Mutex

// upProcessTimeout bounds a wait for `shepherd up` to start or to exit.
const upProcessTimeout = 3 * time.Minute

// startUpProcess runs `shepherd up --data-dir dir ARGS...` in a process of
// its own until it says it is ready; the test's cleanup kills it.
func startUpProcess(t *testing.T, dir string, args ...string) *upProcess {
	t.Helper()
	p := &upProcess{out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], append([]string{"up", "--data-dir", dir}, args...)...)
	p.cmd.Env = append(os.Environ(), runAsShepherdEnv+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited })
	deadline := time.After(upProcessTimeout)
	for !strings.Contains(p.out.String(), "Press Ctrl-C to stop") {
		select {
		case <-p.exited:
			t.Fatalf("up %v exited before it was ready: %v\n%s", args, p.err, tailOf(p.out.String(), 4000))
		case <-deadline:
			t.Fatalf("up %v did not become ready:\n%s", args, tailOf(p.out.String(), 4000))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return p
}

// stop sends sig and returns how the process exited.
func (p *upProcess) stop(t *testing.T, sig os.Signal) error {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		return p.err
	case <-time.After(upProcessTimeout):
		t.Fatalf("up did not exit after %v:\n%s", sig, tailOf(p.out.String(), 4000))
		return nil
	}
}

// logLines are the klog-format lines of out ("E1126 05:06:43.726930 ...").
func logLines(out string) []string {
	var logs []string
	for _, l := range strings.Split(out, "\n") {
		if klogLine.MatchString(l) {
			logs = append(logs, l)
		}
	}
	return logs
}

var klogLine = regexp.MustCompile(`^[IWEF]\d{4} \d\d:\d\d:\d\d`)

// restartFleetPolicy propagates ConfigMap "restart" of the hub's default
// namespace to a Push member and a Pull member.
const restartFleetPolicy = `apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: restart
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: restart
  placement:
    clusterAffinity:
      clusterNames: [member1, pull1]
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: restart-cluster-wide
spec:
  resourceSelectors:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    name: restart-reader
  placement:
    clusterAffinity:
      clusterNames: [member1, pull1]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: restart-reader
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata:
  name: restart
  namespace: default
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: restart}
  overrideRules:
  - overriders:
      plaintext:
      - {path: /data/overridden, operator: add, value: "yes"}
---
apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterOverridePolicy
metadata:
  name: restart-label
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: restart}
  overrideRules:
  - overriders:
      labelsOverrider:
      - operator: add
        value: {restart.example.com/overridden: "yes"}
---
apiVersion: config.shepherd.io/v1alpha1
kind: HealthInterpreter
metadata:
  name: restart-configmap-health
spec:
  target: {apiVersion: v1, kind: ConfigMap}
  health:
    expression: '"Healthy"'
---
apiVersion: config.shepherd.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: restart-widgets
spec:
  target: {apiVersion: example.com/v1, kind: Widget}
  customizations:
    observesGeneration: true
`

// TestUpRestartsWithTheSameDataDir runs `shepherd up` with a Push member
// and a Pull member, with a policy of every kind (propagation and override
// policies, namespaced and cluster-wide, a health interpreter and an
// interpreter customization) propagating a ConfigMap and a ClusterRole to
// both. Then it stops the fleet as Ctrl-C does, and after that twice as
// kill -9 does, each time running `shepherd up` again with the same
// --data-dir: every time the fleet must come back with its Clusters Ready
// and the ConfigMap still in both members, and propagate a change to it.
// The second kill comes right after a change to the ConfigMap, which must
// arrive after the restart.
//
// The hub's stored webhook configuration names the port of the process
// that wrote it, with failurePolicy Fail: a fleet that joined its members
// before serving the webhook again could not restart.
func TestUpRestartsWithTheSameDataDir(t *testing.T) {
	testenv.Heavy(t)
	// Parallel: `up` runs in a process of its own, four times over a
	// minute, and the tests that start control planes in this process go
	// beside it, one at a time (inProcess).
	t.Parallel()
	dir := t.TempDir()
	args := []string{"--members", "1", "--pull-members", "1", "--dashboard-listen", ""}
	members := []string{"member1", "pull1"}
	up := startUpProcess(t, dir, args...)
	// Quiet by default: a clean start prints the banner and the fleet's
	// URLs, no log line (no E line above all).
	if logs := logLines(up.out.String()); len(logs) > 0 {
		t.Errorf("a clean start at -v 0 printed %d log lines, want none:\n%s", len(logs), strings.Join(logs, "\n"))
	}
	hub, memberClients := restartFleetClients(t, dir, members)
	objs, err := testenv.DecodeYAML([]byte(restartFleetPolicy))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, obj := range objs {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "restart"}, Data: map[string]string{"started": "first"}}
	if err := hub.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	awaitConfigMap(t, memberClients, "first")
	awaitEveryPolicy(t, memberClients)

	for _, tc := range []struct {
		name string
		sig  os.Signal
		// clean: up exits without an error.
		clean bool
		// inFlight: the ConfigMap is changed right before the signal,
		// so the change may be anywhere in the pipeline when up dies.
		inFlight bool
	}{
		// One kill of each kind: the chaos suite kills and restarts the
		// hub and the controllers many more times, in every interleaving
		// its seeds draw; here it is `up` itself, on its data dir.
		{name: "after Ctrl-C", sig: os.Interrupt, clean: true},
		{name: "after kill -9", sig: syscall.SIGKILL},
		{name: "after kill -9 with a change in flight", sig: syscall.SIGKILL, inFlight: true},
	} {
		if tc.inFlight {
			setStarted(t, hub, "in flight "+tc.name)
		}
		stopped := time.Now()
		err := up.stop(t, tc.sig)
		if tc.clean && err != nil {
			t.Fatalf("up exited with %v after %v:\n%s", err, tc.sig, tailOf(up.out.String(), 4000))
		}
		up = startUpProcess(t, dir, args...)
		hub, memberClients = restartFleetClients(t, dir, members)
		for name, c := range memberClients {
			got := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
				t.Errorf("%s: the ConfigMap propagated to %s before: %v", tc.name, name, err)
			}
		}
		testenv.Eventually(t, upProcessTimeout, tc.name+": every Cluster Ready", func() error {
			for _, name := range members {
				cl := &clusterv1alpha1.Cluster{}
				if err := hub.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
					return err
				}
				if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
					return fmt.Errorf("cluster %s is not Ready: %v", name, cl.Status.Conditions)
				}
			}
			return nil
		})
		if tc.inFlight {
			awaitConfigMap(t, memberClients, "in flight "+tc.name)
		}
		// The controllers and the Pull member's agent work again.
		setStarted(t, hub, tc.name)
		awaitConfigMap(t, memberClients, tc.name)
		awaitEveryPolicy(t, memberClients)
		t.Logf("TIMING %s: up again, Clusters Ready and the change propagated in %s", tc.name, time.Since(stopped).Round(time.Millisecond))
	}
}

// restartFleetClients are clients of the hub and the members of the fleet
// in dir, from the kubeconfigs `shepherd up` wrote there.
func restartFleetClients(t *testing.T, dir string, members []string) (client.Client, map[string]client.Client) {
	t.Helper()
	newClient := func(kubeconfig string) client.Client {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	out := map[string]client.Client{}
	for _, name := range members {
		out[name] = newClient(localfleet.MemberKubeconfigPath(dir, name))
	}
	return newClient(filepath.Join(dir, "kubeconfig")), out
}

// awaitConfigMap waits until every member has ConfigMap default/restart
// with started=want.
// setStarted sets the key "started" of the hub's ConfigMap restart.
func setStarted(t *testing.T, hub client.Client, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &corev1.ConfigMap{}
		if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "restart"}, got); err != nil {
			return err
		}
		got.Data["started"] = value
		return hub.Update(t.Context(), got)
	})
	if err != nil {
		t.Fatalf("setting started=%s: %v", value, err)
	}
}

// awaitEveryPolicy waits for what the policies of restartFleetPolicy do
// in every member: both overrides on the ConfigMap, and the ClusterRole the
// ClusterPropagationPolicy propagates.
func awaitEveryPolicy(t *testing.T, members map[string]client.Client) {
	t.Helper()
	testenv.Eventually(t, upProcessTimeout, "every policy's effect in every member", func() error {
		for name, c := range members {
			got := &corev1.ConfigMap{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "restart"}, got); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if got.Data["overridden"] != "yes" || got.Labels["restart.example.com/overridden"] != "yes" {
				return fmt.Errorf("%s: the overrides are missing: data %v, labels %v", name, got.Data, got.Labels)
			}
			if err := c.Get(t.Context(), client.ObjectKey{Name: "restart-reader"}, &rbacv1.ClusterRole{}); err != nil {
				return fmt.Errorf("%s: ClusterRole restart-reader: %w", name, err)
			}
		}
		return nil
	})
}

func awaitConfigMap(t *testing.T, members map[string]client.Client, want string) {
	t.Helper()
	testenv.Eventually(t, upProcessTimeout, "ConfigMap restart with started="+want+" in every member", func() error {
		for name, c := range members {
			got := &corev1.ConfigMap{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "restart"}, got); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if got.Data["started"] != want {
				return fmt.Errorf("%s: started=%q", name, got.Data["started"])
			}
		}
		return nil
	})
}
