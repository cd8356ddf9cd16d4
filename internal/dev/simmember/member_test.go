package simmember_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// stderrLogger prints V(0) logs and errors. It deliberately does not use
// testing.T: upstream goroutines may log after a test has returned.
func stderrLogger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(os.Stderr, prefix, args)
	}, funcr.Options{Verbosity: 0})
}

func TestMain(m *testing.M) {
	logging.RedirectKlog(stderrLogger().WithName("klog"))
	os.Exit(m.Run())
}

// avoidNodeZero is an out-of-tree Filter plugin proving that
// Options.SchedulerPlugins reach the scheduler: it counts its calls and
// rejects each member's first node.
type avoidNodeZero struct{ calls *atomic.Int64 }

func (avoidNodeZero) Name() string { return "AvoidNodeZero" }

func (p avoidNodeZero) Filter(_ context.Context, _ fwk.CycleState, _ *corev1.Pod, n fwk.NodeInfo) *fwk.Status {
	p.calls.Add(1)
	if strings.HasSuffix(n.Node().Name, "-node-0") {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node 0 is avoided")
	}
	return nil
}

// startMember starts spec under dataDir. It may run in a goroutine, so it
// reports failure with Errorf and a nil Member.
func startMember(t *testing.T, ctx context.Context, dataDir string, spec simmember.MemberSpec, plugins map[string]simmember.SchedulerPluginFactory) *simmember.Member {
	t.Helper()
	begin := time.Now()
	m, err := simmember.Start(ctx, simmember.Options{
		MemberSpec:       spec,
		DataDir:          filepath.Join(dataDir, spec.Name),
		KubeconfigPath:   filepath.Join(dataDir, spec.Name+".kubeconfig"),
		Logger:           stderrLogger().WithName("member"),
		SchedulerPlugins: plugins,
	})
	if err != nil {
		t.Errorf("starting %s: %v", spec.Name, err)
		return nil
	}
	t.Logf("TIMING %s started in %s", spec.Name, time.Since(begin).Round(time.Millisecond))
	return m
}

// TestMembers runs three members in one process (proving the upstream
// components' global state tolerates it) and checks on them what members
// are for: Deployments become available, Jobs complete, namespace deletion
// removes pods, out-of-tree scheduler plugins apply, and a restart keeps
// everything.
func TestMembers(t *testing.T) {
	testenv.Heavy(t)
	before := runtime.NumGoroutine()
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	fleet := simmember.DefaultFleet(3)
	var filterCalls atomic.Int64
	plugins := map[string]simmember.SchedulerPluginFactory{
		"AvoidNodeZero": func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
			return avoidNodeZero{&filterCalls}, nil
		},
	}
	members := make([]*simmember.Member, len(fleet.Members))
	// Runs before t.TempDir's removal: etcd must be closed by then.
	t.Cleanup(func() {
		cancel()
		for _, m := range members {
			if m != nil {
				_ = m.Wait()
			}
		}
	})
	begin := time.Now()
	var wg sync.WaitGroup
	for i, spec := range fleet.Members {
		var p map[string]simmember.SchedulerPluginFactory
		if i == 0 {
			p = plugins
		}
		wg.Go(func() { members[i] = startMember(t, ctx, dataDir, spec, p) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("TIMING %d members started concurrently in %s", len(members), time.Since(begin).Round(time.Millisecond))

	for _, m := range members {
		checkKubeconfig(t, m)
	}

	// Deployments on all members at once.
	for _, m := range members {
		wg.Go(func() {
			begin := time.Now()
			c := clientFor(t, m)
			createNamespace(t, c, "demo")
			createDeployment(t, c, "demo", "web", 3)
			waitDeploymentAvailable(t, c, "demo", "web", 3)
			t.Logf("TIMING %s: deployment available (3/3) %s after creation", m.Name(), time.Since(begin).Round(time.Millisecond))
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	m1 := clientFor(t, members[0])
	t.Run("scheduler plugin", func(t *testing.T) {
		if filterCalls.Load() == 0 {
			t.Error("AvoidNodeZero.Filter was never called")
		}
		pods, err := m1.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == simmember.NodeName(members[0].Name(), 0) {
				t.Errorf("pod %s landed on %s despite AvoidNodeZero", p.Name, p.Spec.NodeName)
			}
		}
	})
	t.Run("job completes", func(t *testing.T) {
		begin := time.Now()
		createJob(t, m1, "demo", "batch", 2)
		waitFor(t, 60*time.Second, func() (bool, string) {
			j, err := m1.BatchV1().Jobs("demo").Get(ctx, "batch", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return j.Status.Succeeded == 2 && j.Status.CompletionTime != nil,
				fmt.Sprintf("succeeded=%d active=%d", j.Status.Succeeded, j.Status.Active)
		})
		t.Logf("TIMING job with 2 completions completed in %s", time.Since(begin).Round(time.Millisecond))
	})
	t.Run("namespace deletion removes pods", func(t *testing.T) {
		begin := time.Now()
		if err := m1.CoreV1().Namespaces().Delete(ctx, "demo", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, func() (bool, string) {
			pods, err := m1.CoreV1().Pods("demo").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			_, err = m1.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
			return len(pods.Items) == 0 && apierrors.IsNotFound(err), fmt.Sprintf("%d pods left, namespace: %v", len(pods.Items), err)
		})
		t.Logf("TIMING namespace with deployment and job deleted in %s", time.Since(begin).Round(time.Millisecond))
	})

	t.Run("restart keeps state", func(t *testing.T) {
		old := members[1]
		begin := time.Now()
		if err := old.Stop(); err != nil {
			t.Fatalf("stopping %s: %v", old.Name(), err)
		}
		t.Logf("TIMING %s stopped in %s", old.Name(), time.Since(begin).Round(time.Millisecond))
		members[1] = startMember(t, ctx, dataDir, fleet.Members[1], nil)
		if members[1] == nil {
			t.FailNow()
		}
		c := clientFor(t, members[1])
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != fleet.Members[1].Nodes {
			t.Errorf("got %d nodes after restart, want %d", len(nodes.Items), fleet.Members[1].Nodes)
		}
		waitDeploymentAvailable(t, c, "demo", "web", 3)
		// Still alive after the restart: scaling up is acted on.
		scale, err := c.AppsV1().Deployments("demo").GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = 4
		if _, err := c.AppsV1().Deployments("demo").UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitDeploymentAvailable(t, c, "demo", "web", 4)
		t.Logf("TIMING %s restarted, deployment available and scaled to 4 in %s", old.Name(), time.Since(begin).Round(time.Millisecond))
	})

	t.Run("a control plane restart under running components", func(t *testing.T) {
		m := members[2]
		c := clientFor(t, m)
		createNamespace(t, c, "cp-restart")
		createDeployment(t, c, "cp-restart", "api", 2)
		waitDeploymentAvailable(t, c, "cp-restart", "api", 2)
		url := m.URL()
		begin := time.Now()
		if err := m.RestartControlPlane(500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if m.URL() != url {
			t.Errorf("the member moved from %s to %s", url, m.URL())
		}
		select {
		case <-m.Done():
			t.Fatalf("the member stopped with its control plane: %v", m.Wait())
		default:
		}
		// The member's controllers, scheduler and kwok act again: a scale
		// up becomes available pods.
		c = clientFor(t, m)
		scale, err := c.AppsV1().Deployments("cp-restart").GetScale(ctx, "api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scale.Spec.Replicas = 3
		if _, err := c.AppsV1().Deployments("cp-restart").UpdateScale(ctx, "api", scale, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitDeploymentAvailable(t, c, "cp-restart", "api", 3)
		t.Logf("TIMING %s's control plane restarted and a scale-up available in %s", m.Name(), time.Since(begin).Round(time.Millisecond))
	})

	begin = time.Now()
	cancel()
	for _, m := range members {
		if err := m.Wait(); err != nil {
			t.Errorf("%s: %v", m.Name(), err)
		}
	}
	t.Logf("TIMING %d members stopped in %s", len(members), time.Since(begin).Round(time.Millisecond))
	checkGoroutines(t, before)
}

// checkGoroutines logs what is left running a moment after all members
// stopped; nothing may keep spinning.
func checkGoroutines(t *testing.T, before int) {
	time.Sleep(2 * time.Second)
	after := runtime.NumGoroutine()
	t.Logf("goroutines: %d before start, %d after stop", before, after)
	if os.Getenv("MEMBER_DUMP_GOROUTINES") != "" {
		buf := make([]byte, 1<<22)
		t.Logf("%s", buf[:runtime.Stack(buf, true)])
	}
}

func checkKubeconfig(t *testing.T, m *simmember.Member) {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(m.KubeconfigPath())
	if err != nil {
		t.Fatalf("loading %s: %v", m.KubeconfigPath(), err)
	}
	if kc.CurrentContext != m.Name() || kc.Contexts[m.Name()] == nil || kc.Clusters[m.Name()].Server != m.URL() {
		t.Errorf("%s: context %q, server %v; want context %q at %s", m.KubeconfigPath(), kc.CurrentContext,
			kc.Clusters[m.Name()], m.Name(), m.URL())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", m.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		t.Fatalf("listing nodes with %s: %v", m.KubeconfigPath(), err)
	}
	for _, n := range nodes.Items {
		if n.Labels[corev1.LabelTopologyZone] == "" || len(n.Spec.Taints) != 0 {
			t.Errorf("node %s: zone label %q, taints %v", n.Name, n.Labels[corev1.LabelTopologyZone], n.Spec.Taints)
		}
	}
}

func clientFor(t *testing.T, m *simmember.Member) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(m.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating namespace %s: %v", name, err)
	}
}

func podSpec(restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "demo"}},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("500m"),
					corev1.ResourceMemory: resource.MustParse("256Mi"),
				}},
			}},
		},
	}
}

func createDeployment(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "demo"}},
			Template: podSpec(corev1.RestartPolicyAlways),
		},
	}
	if _, err := c.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating deployment %s/%s: %v", ns, name, err)
	}
}

func createJob(t *testing.T, c kubernetes.Interface, ns, name string, completions int32) {
	t.Helper()
	tmpl := podSpec(corev1.RestartPolicyNever)
	tmpl.Labels = map[string]string{"app": "batch"}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       batchv1.JobSpec{Completions: &completions, Parallelism: &completions, Template: tmpl},
	}
	if _, err := c.BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating job %s/%s: %v", ns, name, err)
	}
}

func waitDeploymentAvailable(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	waitFor(t, 60*time.Second, func() (bool, string) {
		d, err := c.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.AvailableReplicas == replicas && d.Status.UpdatedReplicas == replicas,
			fmt.Sprintf("available=%d updated=%d", d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
	})
}

// waitFor polls cond until it holds, failing the test with cond's last
// description after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("timed out after %s: %s", timeout, desc)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
