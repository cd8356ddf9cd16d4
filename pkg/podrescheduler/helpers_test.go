package podrescheduler_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/shepherd-io/shepherd/test/testenv"
)

const (
	pollInterval = 100 * time.Millisecond
	waitTimeout  = 60 * time.Second
)

// createExample creates every object of examples/pod-rescheduling/name,
// the YAML docs/pod-rescheduling.md shows.
func createExample(t *testing.T, ctx context.Context, c client.Client, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "pod-rescheduling", name))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s from %s: %v", obj.GetKind(), obj.GetName(), name, err)
		}
	}
}

// eventually polls cond until it holds, failing the test after waitTimeout
// with what describe says about the last state.
func eventually(t *testing.T, ctx context.Context, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// runningPod waits for a Running pod labelled app=app, not being deleted
// and not among skip (UIDs), and returns it.
func runningPod(t *testing.T, ctx context.Context, c client.Client, app string, skip ...string) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	eventually(t, ctx, "a new running pod of "+app, func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app": app}); err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && !slices.Contains(skip, string(p.UID)) {
				found = p
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// oomKill makes pod look OOM-killed and restarted, as a kubelet reports
// it: the container's last termination is OOMKilled. kwok leaves a Running
// pod's status alone, so the change sticks.
func oomKill(t *testing.T, ctx context.Context, c client.Client, pod *corev1.Pod) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		s := &p.Status.ContainerStatuses[0]
		s.RestartCount++
		s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "OOMKilled", ExitCode: 137, StartedAt: p.CreationTimestamp, FinishedAt: p.CreationTimestamp,
		}}
		return c.Status().Update(ctx, p)
	})
	if err != nil {
		t.Fatalf("simulating an OOM kill of %s: %v", pod.Name, err)
	}
}

// gone reports whether the pod with pod's name and UID no longer exists.
func gone(ctx context.Context, c client.Client, pod *corev1.Pod) (bool, error) {
	p := &corev1.Pod{}
	err := c.Get(ctx, client.ObjectKeyFromObject(pod), p)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return err == nil && p.UID != pod.UID, client.IgnoreNotFound(err)
}

// hasEvent reports whether an event with reason regards the object name.
func hasEvent(ctx context.Context, c client.Client, name, reason string) (bool, error) {
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace("default")); err != nil {
		return false, err
	}
	return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name == name && e.Reason == reason
	}), nil
}

// scale sets the replicas of Deployment name in default.
func scale(t *testing.T, ctx context.Context, c client.Client, name string, replicas int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, d); err != nil {
			return err
		}
		d.Spec.Replicas = &replicas
		return c.Update(ctx, d)
	})
	if err != nil {
		t.Fatalf("scaling %s to %d: %v", name, replicas, err)
	}
}

// workloadReads counts the GETs of single workloads (ReplicaSets,
// Deployments, StatefulSets, Jobs) sent through a rest.Config: what the
// webhook costs the API server per pod creation. Lists and watches, which
// name no object, are not counted.
type workloadReads struct{ n atomic.Int64 }

var workloadGet = regexp.MustCompile(`/namespaces/[^/]+/(replicasets|deployments|statefulsets|jobs)/[^/]+$`)

// wrap returns a copy of cfg whose requests r counts.
func (r *workloadReads) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && workloadGet.MatchString(req.URL.Path) {
				r.n.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

func (r *workloadReads) count() int64 { return r.n.Load() }

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// webhookRequests is how many pod creations the webhooks of this process
// have seen, by their shepherd_podrescheduler_webhook_requests_total.
func webhookRequests(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() == "shepherd_podrescheduler_webhook_requests_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
