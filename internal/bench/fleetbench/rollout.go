package fleetbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// The rollout benchmark: one image change of one Deployment that runs on
// every one of RolloutOptions.Clusters simulated Pull clusters, rolled out
// Staged in RolloutOptions.Stages stages of equal size. A rollout cannot
// finish sooner than the sum of its waits: each stage's clusters must be
// healthy for minSuccessSeconds, and each stage but the last waits
// waitSeconds before the next starts. That sum is the floor; the report
// gives the time from the template's edit to the rollout's Complete as a
// ratio to it, and the hub writes the change cost per cluster.

// Defaults of RolloutOptions: about two minutes of setup and one of
// rollout on two cores.
const (
	DefaultRolloutClusters          = 1000
	DefaultRolloutStages            = 10
	DefaultRolloutMinSuccessSeconds = 5
	DefaultRolloutWaitSeconds       = 0
	DefaultRolloutTimeout           = 10 * time.Minute
)

// The simulated agents' Lease timing in the rollout benchmark: the ratio
// of Karmada's (a renewal every quarter of the duration), five minutes
// long.
const (
	rolloutLeaseDuration    = 5 * time.Minute
	rolloutLeaseRenewPeriod = 75 * time.Second
)

// rolloutStageLabel puts a simulated cluster in its stage.
const rolloutStageLabel = "bench.shepherd.io/stage"

// rolloutImages are the image before and after the change.
var rolloutImages = [2]string{"example.com/web:v1", "example.com/web:v2"}

// RolloutOptions size the rollout benchmark.
type RolloutOptions struct {
	// Clusters are simulated Pull clusters, all running the workload.
	Clusters int
	// Stages divide the clusters in order of their names, equally (the
	// first stages take one more when they do not divide evenly).
	Stages int
	// MinSuccessSeconds and WaitSeconds are every stage's (the rollout's
	// minSuccessSeconds, each stage's waitSeconds).
	MinSuccessSeconds int32
	WaitSeconds       int32
	// Timeout bounds each wait: the first revision everywhere, then the
	// change.
	Timeout time.Duration
	Logger  logr.Logger
}

// Validate refuses a size that cannot be run, naming the flag of `shepherd
// bench rollout` that sets it.
func (o RolloutOptions) Validate() error {
	var errs []error
	if o.Clusters < 1 {
		errs = append(errs, fmt.Errorf("--clusters %d: at least 1", o.Clusters))
	}
	if o.Stages < 1 || (o.Clusters >= 1 && o.Stages > o.Clusters) {
		errs = append(errs, fmt.Errorf("--stages %d: at least 1 and at most --clusters (%d): a stage without clusters is skipped", o.Stages, o.Clusters))
	}
	if o.MinSuccessSeconds < 0 || o.WaitSeconds < 0 {
		errs = append(errs, fmt.Errorf("--min-success-seconds %d, --wait-seconds %d: neither may be negative", o.MinSuccessSeconds, o.WaitSeconds))
	} else if o.floor() <= 0 {
		errs = append(errs, errors.New("--min-success-seconds and --wait-seconds are both 0: the floor the time is compared with would be 0"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	return errors.Join(errs...)
}

// floor is the sum of the rollout's waits, in seconds.
func (o RolloutOptions) floor() float64 {
	return float64(o.Stages)*float64(o.MinSuccessSeconds) + float64(o.Stages-1)*float64(o.WaitSeconds)
}

// stageOf is the stage of cluster i of n in s stages.
func stageOf(i, n, s int) int { return i * s / n }

func stageName(i int) string { return fmt.Sprintf("stage-%02d", i+1) }

// RolloutReport is what one run measured.
type RolloutReport struct {
	Clusters          int   `json:"clusters"`
	Stages            int   `json:"stages"`
	MinSuccessSeconds int32 `json:"minSuccessSeconds"`
	WaitSeconds       int32 `json:"waitSeconds"`
	// FloorSeconds is the sum of the rollout's waits.
	FloorSeconds float64 `json:"floorSeconds"`
	// CompleteSeconds is from the template's edit until the binding's
	// rollout of the new revision is Complete.
	CompleteSeconds float64 `json:"completeSeconds"`
	// RatioToFloor is CompleteSeconds / FloorSeconds.
	RatioToFloor float64 `json:"ratioToFloor"`
	// StageSeconds are each stage's start to end, as the binding recorded
	// them (whole seconds).
	StageSeconds []float64 `json:"stageSeconds"`
	// HubWrites are the hub's write requests while the change rolled out,
	// but the Lease renewals (LeaseWrites: the simulated agents' heartbeats
	// and the controllers' leader election, which go on with or without a
	// rollout); HubWritesPerCluster divides them by Clusters.
	HubWrites           int     `json:"hubWrites"`
	HubWritesPerCluster float64 `json:"hubWritesPerCluster"`
	LeaseWrites         int     `json:"leaseWrites"`
	// Writes are those writes by verb and resource, per cluster.
	Writes []RequestRate `json:"writesPerCluster"`
	// BindingBytes is the size of the binding at the end (its
	// status.rollout holds a line per cluster).
	BindingBytes int `json:"bindingBytes"`
}

// RunRollout starts the hub, the controllers and the simulated clusters,
// rolls out the first revision everywhere, then measures the change.
func RunRollout(ctx context.Context, o RolloutOptions) (*RolloutReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return onOwnFleet(ctx, o.Logger, "rollout", func(ctx context.Context, where on) (*RolloutReport, error) { return rollout(ctx, o, where) })
}

// rollout registers the simulated clusters on the fleet of where, rolls out
// the first revision everywhere, then measures the change; o is valid.
func rollout(ctx context.Context, o RolloutOptions, where on) (*RolloutReport, error) {
	log := o.Logger
	labels := func(i int) map[string]string {
		return map[string]string{rolloutStageLabel: stageName(stageOf(i, o.Clusters, o.Stages))}
	}
	// Heartbeats are not what this measures: on a busy small machine a
	// thousand agents renewing 40 s Leases every 10 s fall behind, and a
	// cluster tainted unreachable leaves the placement mid-rollout.
	sim := simOptions{labels: labels, leaseDuration: rolloutLeaseDuration, renewPeriod: rolloutLeaseRenewPeriod}
	admin, hub, err := registerSimulated(ctx, where, o.Clusters, sim, log)
	if err != nil {
		return nil, err
	}
	ns := where.ns
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	if err := hub.Create(ctx, rolloutPolicy(ns, o)); err != nil {
		return nil, fmt.Errorf("creating the policy: %w", err)
	}
	dep := deployment(ns, 0, 0, 1)
	dep.Spec.Template.Spec.Containers[0].Image = rolloutImages[0]
	if err := hub.Create(ctx, dep); err != nil {
		return nil, fmt.Errorf("creating the Deployment: %w", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", dep.Name)}
	log.Info("rolling out the first revision to every cluster")
	first, err := waitComplete(ctx, hub, key, "", o.Clusters, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("the first revision: %w", err)
	}

	before, err := apiRequests(ctx, admin)
	if err != nil {
		return nil, err
	}
	log.Info("changing the image", "from", rolloutImages[0], "to", rolloutImages[1])
	start := time.Now()
	orig := dep.DeepCopy()
	dep.Spec.Template.Spec.Containers[0].Image = rolloutImages[1]
	if err := hub.Patch(ctx, dep, client.MergeFrom(orig)); err != nil {
		return nil, fmt.Errorf("changing the image: %w", err)
	}
	b, err := waitComplete(ctx, hub, key, first.Status.Rollout.Revision, o.Clusters, o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("the change: %w", err)
	}
	elapsed := time.Since(start)
	after, err := apiRequests(ctx, admin)
	if err != nil {
		return nil, err
	}
	rep := &RolloutReport{Clusters: o.Clusters, Stages: o.Stages, MinSuccessSeconds: o.MinSuccessSeconds, WaitSeconds: o.WaitSeconds,
		FloorSeconds: o.floor(), CompleteSeconds: elapsed.Seconds()}
	rep.RatioToFloor = rep.CompleteSeconds / rep.FloorSeconds
	rep.countWrites(requestDelta(before, after))
	for _, s := range b.Status.Rollout.Stages {
		if s.StartedAt != nil && s.CompletedAt != nil {
			rep.StageSeconds = append(rep.StageSeconds, s.CompletedAt.Sub(s.StartedAt.Time).Seconds())
		}
	}
	if raw, err := json.Marshal(b); err == nil {
		rep.BindingBytes = len(raw)
	}
	return rep, nil
}

// countWrites sums the writes of reqs but the Leases' into the report.
func (r *RolloutReport) countWrites(reqs []RequestCount) {
	writes, leases := writesButLeases(reqs)
	r.LeaseWrites = leases
	for _, q := range writes {
		r.HubWrites += q.Count
	}
	r.HubWritesPerCluster = float64(r.HubWrites) / float64(max(r.Clusters, 1))
	r.Writes = writesPer(writes, r.Clusters)
}

// rolloutPolicy places the Deployment on every simulated cluster, rolled
// out Staged: stage i takes the clusters labelled with its name.
func rolloutPolicy(ns string, o RolloutOptions) *policyv1alpha1.PropagationPolicy {
	var stages []policyv1alpha1.RolloutStage
	for i := range o.Stages {
		stages = append(stages, policyv1alpha1.RolloutStage{Name: stageName(i), WaitSeconds: o.WaitSeconds,
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{rolloutStageLabel: stageName(i)}}})
	}
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "app-0"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: rolloutStageLabel, Operator: metav1.LabelSelectorOpExists}}}}},
			Rollout: &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged, MinSuccessSeconds: o.MinSuccessSeconds, Stages: stages},
		},
	}
}

// waitComplete polls the binding until its rollout of a revision other
// than previous is Complete on n clusters.
func waitComplete(ctx context.Context, hub client.Reader, key client.ObjectKey, previous string, n int, timeout time.Duration) (*workv1alpha1.ResourceBinding, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		b := &workv1alpha1.ResourceBinding{}
		err := hub.Get(ctx, key, b)
		switch {
		case err != nil:
			last = err.Error()
		case b.Status.Rollout == nil:
			last = "no rollout status yet"
		default:
			st := b.Status.Rollout
			last = fmt.Sprintf("revision %s: %s (%s)", st.Revision, st.Phase, st.Message)
			if st.Revision != previous && st.Phase == workv1alpha1.RolloutPhaseComplete && len(st.Clusters) == n {
				return b, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not complete within %s: %s", timeout, strings.TrimSpace(last))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
