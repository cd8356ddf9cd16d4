package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/firstseen"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/podsample"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ByMode reads Push members with push and Pull members with pull.
func ByMode(push, pull Members) Members { return byMode{push: push, pull: pull} }

type byMode struct{ push, pull Members }

func (b byMode) of(c *clusterv1alpha1.Cluster) Members {
	if c.Spec.SyncMode == clusterv1alpha1.Pull {
		return b.pull
	}
	return b.push
}

func (b byMode) Pods(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]corev1.Pod, error) {
	return b.of(c).Pods(ctx, c, w)
}

func (b byMode) PodMetrics(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]metricsv1beta1.PodMetrics, error) {
	return b.of(c).PodMetrics(ctx, c, w)
}

func (b byMode) CustomMetric(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	return b.of(c).CustomMetric(ctx, c, w, req)
}

func (b byMode) HorizontalPodAutoscalers(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	return b.of(c).HorizontalPodAutoscalers(ctx, c, w)
}

// NewPullMembers reads Pull members from the samples their agents report
// in the target's Work on the hub (status.podMetrics, asked for with the
// label workv1alpha1.LabelPodMetrics and, for custom metrics, the
// annotation workv1alpha1.AnnotationCustomMetrics, which the controller
// sets): no connection to the member. A sample first read more than
// maxAge ago, on the hub's clock, is stale, and the member is left out,
// as a Push member whose newest metrics are that old.
func NewPullMembers(hub client.Reader, maxAge time.Duration, now func() time.Time) Members {
	return pullMembers{hub: hub, maxAge: maxAge, now: now, seen: &firstseen.Tracker[int64]{}}
}

type pullMembers struct {
	hub    client.Reader
	maxAge time.Duration
	now    func() time.Time
	// seen is when each Work's sample (by its sampleTime in nanoseconds,
	// 0 for none) was first read. sampleTime is on the agent's clock,
	// which may be off from the hub's by any amount: a sample's age
	// counts from when the hub first read it, on its clock (see
	// firstseen), up to one sync period late. After a restart a sample
	// first read then gets a full maxAge, as a Lease gets its duration:
	// an agent that had stopped has its last sample used that much
	// longer, never a live one left out.
	seen *firstseen.Tracker[int64]
}

// excludedError says why a member is left out, in words that need no
// prefix.
type excludedError struct{ msg string }

func (e *excludedError) Error() string { return e.msg }

// sample is the agent's current sample of the workload, or why there is
// none to use.
func (p pullMembers) sample(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) (*workv1alpha1.PodMetricsSample, error) {
	work := &workv1alpha1.Work{}
	key := workKey(c.Name, w)
	if err := p.hub.Get(ctx, key, work); err != nil {
		if apierrors.IsNotFound(err) {
			p.seen.Forget(key.String())
			return nil, &excludedError{"no Work of the target in the Pull cluster yet"}
		}
		return nil, fmt.Errorf("reading the target's Work: %w", err)
	}
	now := p.now()
	s := work.Status.PodMetrics
	if s == nil {
		p.seen.Since(key.String(), 0, now)
		return nil, &excludedError{"no metrics reported by the agent yet"}
	}
	seen, _ := p.seen.Since(key.String(), s.SampleTime.UnixNano(), now)
	return s, stale(seen, now, p.maxAge)
}

// stale says why a sample the hub first read at seen is too old to use
// at now, both on the hub's clock.
func stale(seen, now time.Time, maxAge time.Duration) error {
	if age := now.Sub(seen); age > maxAge {
		return &excludedError{fmt.Sprintf("metrics stale: the agent's newest sample was first read %s ago", age.Round(time.Second))}
	}
	return nil
}

func (p pullMembers) Pods(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]corev1.Pod, error) {
	s, err := p.sample(ctx, c, w)
	if err != nil {
		return nil, err
	}
	return podsample.Pods(s), nil
}

func (p pullMembers) PodMetrics(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]metricsv1beta1.PodMetrics, error) {
	s, err := p.sample(ctx, c, w)
	if err != nil {
		return nil, err
	}
	if s.Error != "" {
		return nil, errors.New(s.Error)
	}
	return podsample.PodMetrics(s), nil
}

// CustomMetric is the metric as the agent read it, which it does once the
// Work asks for it (annotation workv1alpha1.AnnotationCustomMetrics).
func (p pullMembers) CustomMetric(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload, req workv1alpha1.CustomMetricRequest) ([]custommetricsv1beta2.MetricValue, error) {
	s, err := p.sample(ctx, c, w)
	if err != nil {
		return nil, err
	}
	return podsample.CustomMetric(s, req)
}

// HorizontalPodAutoscalers are the member's autoscalers of the workload
// the agent named.
func (p pullMembers) HorizontalPodAutoscalers(ctx context.Context, c *clusterv1alpha1.Cluster, w Workload) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	s, err := p.sample(ctx, c, w)
	if err != nil {
		return nil, err
	}
	out := make([]autoscalingv2.HorizontalPodAutoscaler, 0, len(s.Autoscalers))
	for _, n := range s.Autoscalers {
		out = append(out, autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: n},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: w.Ref}})
	}
	return out, nil
}

// workKey is the Work of the target in cluster: its binding's Work in
// the cluster's execution namespace.
func workKey(cluster string, w Workload) client.ObjectKey {
	return client.ObjectKey{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName(w.Namespace, names.BindingName(w.Ref.Kind, w.Ref.Name))}
}
