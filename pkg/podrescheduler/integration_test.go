package podrescheduler_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/logging"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/controller"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/schedplugin"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/webhook"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// stderrLogger prints V(0) logs and errors, not through testing.T:
// upstream goroutines may log after a test returned.
func stderrLogger() logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}

func TestMain(m *testing.M) {
	logging.RedirectKlog(stderrLogger().WithName("klog"))
	os.Exit(m.Run())
}

// TestPodRescheduling runs the three parts together on a simulated member
// (real kube-apiserver, controllers and kube-scheduler with the plugin,
// four kwok nodes), with the controller and webhook in-process reached
// through a url: webhook configuration, as `shepherd up` would run them.
func TestPodRescheduling(t *testing.T) {
	testenv.Heavy(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	begin := time.Now()
	spec := simmember.DefaultMemberSpec("resched")
	m, err := simmember.Start(ctx, simmember.Options{
		MemberSpec:       spec,
		DataDir:          filepath.Join(t.TempDir(), spec.Name),
		Logger:           stderrLogger().WithName("member"),
		SchedulerPlugins: map[string]simmember.SchedulerPluginFactory{schedplugin.Name: schedplugin.New},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = m.Wait() }) // before TempDir's removal
	reads := &workloadReads{}
	r, err := podrescheduler.Start(ctx, reads.wrap(m.RestConfig()), podrescheduler.Options{
		Webhook: webhook.Options{URLConfiguration: true},
		Logger:  stderrLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("TIMING member and rescheduler started in %s", time.Since(begin).Round(time.Millisecond))
	c, err := client.New(m.RestConfig(), client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]string, spec.Nodes)
	for i := range nodes {
		nodes[i] = simmember.NodeName(spec.Name, i)
	}

	step := func(name string, f func(t *testing.T)) {
		start := time.Now()
		t.Run(name, f)
		t.Logf("TIMING %s: %s", name, time.Since(start).Round(time.Millisecond))
	}
	step("deployment is rescheduled away from the nodes tried, up to its retries", func(t *testing.T) {
		testDeployment(t, ctx, c)
		t.Logf("REQUESTS workload GETs while the opted-in Deployment's pods were created and rescheduled: %d", reads.count())
	})
	step("workload without the annotation is never touched", func(t *testing.T) {
		testNotOptedIn(t, ctx, c, reads)
	})
	step("owner-less pod is recreated with its spec on another node", func(t *testing.T) {
		testOwnerless(t, ctx, c)
	})
	step("exclusion of every node is dropped", func(t *testing.T) {
		testAllNodesExcluded(t, ctx, c, nodes)
	})
	step("exclusion of every feasible node is dropped", func(t *testing.T) {
		testFeasibleNodesExcluded(t, ctx, c, nodes[:2])
	})
	step("webhook down does not block pod creation", func(t *testing.T) {
		if err := r.Stop(); err != nil {
			t.Fatalf("stopping the rescheduler: %v", err)
		}
		testWebhookDown(t, ctx, c)
	})
}

func testDeployment(t *testing.T, ctx context.Context, c client.Client) {
	createExample(t, ctx, c, "deployment.yaml")
	var tried, uids []string
	pod := runningPod(t, ctx, c, "memory-hungry")
	for attempt := 1; attempt <= 2; attempt++ {
		tried, uids = append(tried, pod.Spec.NodeName), append(uids, string(pod.UID))
		oomKill(t, ctx, c, pod)
		pod = runningPod(t, ctx, c, "memory-hungry", uids...)
		if slices.Contains(tried, pod.Spec.NodeName) {
			t.Fatalf("attempt %d: replacement %s landed on %s, already tried (%v)", attempt, pod.Name, pod.Spec.NodeName, tried)
		}
		if got, want := pod.Annotations[annotations.ExcludedNodes], strings.Join(tried, ","); got != want {
			t.Errorf("attempt %d: replacement excludes %q, want %q", attempt, got, want)
		}
	}

	// Retries used up: the next failure is recorded but the pod stays.
	oomKill(t, ctx, c, pod)
	eventually(t, ctx, "the retry limit to be recorded", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "memory-hungry"}, d); err != nil {
			return false, err
		}
		s, _, err := annotations.Read(d.Annotations)
		return s.Exhausted(), err
	})
	eventually(t, ctx, "a RetryLimitReached event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, c, pod.Name, controller.ReasonRetryLimitReached)
	})
	if isGone, err := gone(ctx, c, pod); err != nil || isGone {
		t.Fatalf("pod %s failing after the last retry was deleted (err %v)", pod.Name, err)
	}
	// Its next replacement may go anywhere: nothing is excluded.
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	next := runningPod(t, ctx, c, "memory-hungry", append(uids, string(pod.UID))...)
	if ex, ok := next.Annotations[annotations.ExcludedNodes]; ok {
		t.Errorf("pod created after the retries were exhausted excludes %q", ex)
	}
}

func testNotOptedIn(t *testing.T, ctx context.Context, c client.Client, reads *workloadReads) {
	createExample(t, ctx, c, "not-opted-in.yaml")
	pod := runningPod(t, ctx, c, "steady")
	oomKill(t, ctx, c, pod)
	// The controller reacts within milliseconds to a watched failure; a
	// few seconds without a change mean it left the pod alone.
	time.Sleep(3 * time.Second)
	if isGone, err := gone(ctx, c, pod); err != nil || isGone {
		t.Fatalf("pod %s of a workload that did not opt in was deleted (err %v)", pod.Name, err)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "steady"}, d); err != nil {
		t.Fatal(err)
	}
	for k := range d.Annotations {
		if strings.HasPrefix(k, "shepherd.io/") {
			t.Errorf("deployment that did not opt in got annotation %s", k)
		}
	}
	testNotOptedInScaleUp(t, ctx, c, reads)
}

// testNotOptedInScaleUp scales steady up: its new pods pass the webhook,
// which tells from its cache that the Deployment did not opt in, reads
// nothing from the API server and leaves the pods as they are.
func testNotOptedInScaleUp(t *testing.T, ctx context.Context, c client.Client, reads *workloadReads) {
	const replicas = 6
	before, calls := reads.count(), webhookRequests(t)
	scale(t, ctx, c, "steady", replicas)
	pods := &corev1.PodList{}
	eventually(t, ctx, "the scaled-up replicas", func(ctx context.Context) (bool, error) {
		err := c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app": "steady"})
		return len(pods.Items) == replicas, err
	})
	// Reading nothing counts only if the pods were sent to the webhook.
	if got := webhookRequests(t) - calls; got < replicas-1 {
		t.Errorf("the webhook was called for %v pod creations, want %d", got, replicas-1)
	}
	if got := reads.count() - before; got != 0 {
		t.Errorf("the rescheduler read workloads %d times from the API server for %d pod creations of a Deployment that did not opt in, want 0", got, replicas-1)
	}
	t.Logf("REQUESTS workload GETs for %d pod creations of a Deployment not opted in: %d", replicas-1, reads.count()-before)
	for _, p := range pods.Items {
		for k := range p.Annotations {
			if strings.HasPrefix(k, "shepherd.io/") {
				t.Errorf("pod %s of a Deployment that did not opt in got annotation %s", p.Name, k)
			}
		}
	}
	scale(t, ctx, c, "steady", 1)
}

func testOwnerless(t *testing.T, ctx context.Context, c client.Client) {
	createExample(t, ctx, c, "pod.yaml")
	pod := runningPod(t, ctx, c, "batch-worker")
	oomKill(t, ctx, c, pod)
	next := runningPod(t, ctx, c, "batch-worker", string(pod.UID))
	if next.Name != "batch-worker-retry-1" || next.Spec.NodeName == pod.Spec.NodeName {
		t.Fatalf("replacement %s on %s; want batch-worker-retry-1 away from %s", next.Name, next.Spec.NodeName, pod.Spec.NodeName)
	}
	if next.Spec.Containers[0].Image != pod.Spec.Containers[0].Image || next.Spec.ServiceAccountName != "batch-worker" ||
		next.Annotations[annotations.SchedulingRetries] != "2" {
		t.Errorf("replacement lost the original's spec or annotations: %+v", next)
	}
	eventually(t, ctx, "the failed pod to be deleted", func(ctx context.Context) (bool, error) { return gone(ctx, c, pod) })
}

func testAllNodesExcluded(t *testing.T, ctx context.Context, c client.Client, nodes []string) {
	pod := plainPod("everywhere-tried", annotations.FormatList(nodes))
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	runningPod(t, ctx, c, pod.Name)
	eventually(t, ctx, "an ExclusionDropped event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, c, pod.Name, schedplugin.ReasonExclusionDropped)
	})
}

func testFeasibleNodesExcluded(t *testing.T, ctx context.Context, c client.Client, feasible []string) {
	pod := plainPod("feasible-tried", annotations.FormatList(feasible))
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: feasible}},
		}}},
	}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	running := runningPod(t, ctx, c, pod.Name)
	if !slices.Contains(feasible, running.Spec.NodeName) {
		t.Errorf("pod ran on %s, outside its affinity %v", running.Spec.NodeName, feasible)
	}
	if _, ok := running.Annotations[annotations.ExcludedNodes]; ok {
		t.Errorf("the exclusion was not removed from the pod")
	}
	eventually(t, ctx, "an ExclusionDropped event", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, c, pod.Name, schedplugin.ReasonExclusionDropped)
	})
}

func testWebhookDown(t *testing.T, ctx context.Context, c client.Client) {
	begin := time.Now()
	scale(t, ctx, c, "memory-hungry", 2)
	// The new replica's creation calls the webhook (the pod has an owner),
	// which is gone: failurePolicy Ignore admits it.
	eventually(t, ctx, "the scaled-up replica", func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		err := c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app": "memory-hungry"})
		return len(pods.Items) == 2, err
	})
	t.Logf("TIMING replica created %s after scaling up with the webhook down", time.Since(begin).Round(time.Millisecond))
}

// plainPod is an owner-less pod labelled app=name that did not opt in but
// carries an exclusion (as a webhook would have written it).
func plainPod(name, excluded string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, Labels: map[string]string{"app": name},
			Annotations: map[string]string{annotations.ExcludedNodes: excluded},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}
