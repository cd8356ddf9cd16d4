package fleetbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/config"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// The status-storm benchmark: does a storm of status writes starve
// scheduling? A hub with the controller manager (under its ServiceAccount,
// as `shepherd up` runs it) and simulated Pull clusters; StormWorks Works
// whose health flaps, written by StormWriters goroutines as fast as the
// hub lets them, under the controller manager's identity (the Push
// clusters' status collection is the controller manager). While the storm
// runs, StormWorkloads new Deployments are created and each binding's
// scheduling latency is measured, from the watch's clock: once without
// config/flowcontrol's FlowSchemas (every request of the controller
// manager then falls into the built-in service-accounts schema: one flow
// in workload-low, storm and scheduler alike) and once with them, in one
// run on one hub.

// Defaults of StormOptions: about a minute on two cores.
const (
	DefaultStormClusters  = 3
	DefaultStormWorks     = 1000
	DefaultStormWriters   = 64
	DefaultStormWorkloads = 100
	DefaultStormTimeout   = 5 * time.Minute
	// DefaultStormHubMaxInFlight is the hub's concurrency limit: a tenth
	// of kube-apiserver's 600, as the storm is a tenth of a large fleet's.
	// On two cores the CPU runs out long before 600 seats do, and API
	// Priority and Fairness divides seats, not CPU: at 600 seats nothing
	// queues and both phases measure the CPU alone.
	DefaultStormHubMaxInFlight = 60
)

// stormCreateEvery paces the creation of the workloads measured.
const stormCreateEvery = 50 * time.Millisecond

// stormLabel marks the Works of the storm.
const stormLabel = "bench.shepherd.io/storm"

// stormWarmUp is how long the storm runs before the workloads are created,
// so that they meet it at its steady rate.
const stormWarmUp = 3 * time.Second

// StormOptions size the status-storm benchmark.
type StormOptions struct {
	// Clusters are simulated Pull clusters (at least 2: the workloads are
	// divided over two).
	Clusters int
	// Works flap their health (at least 1).
	Works int
	// Writers write the storm concurrently (at least 1).
	Writers int
	// Workloads are the Deployments scheduled in each phase (at least 1).
	Workloads int
	// Timeout bounds each phase's wait for its bindings to be Scheduled.
	Timeout time.Duration
	// HubMaxInFlight is the hub's limit of requests served at once, the
	// seats its priority levels divide (at least 3).
	HubMaxInFlight int
	Logger         logr.Logger
}

// Validate refuses a size that cannot be run, naming the flag of `shepherd
// bench storm` that sets it.
func (o StormOptions) Validate() error {
	var errs []error
	if o.Clusters < 2 {
		errs = append(errs, fmt.Errorf("--clusters %d: at least 2 (the workloads are divided over two clusters)", o.Clusters))
	}
	if o.Works < 1 {
		errs = append(errs, fmt.Errorf("--works %d: at least 1 Work must flap", o.Works))
	}
	if o.Writers < 1 {
		errs = append(errs, fmt.Errorf("--writers %d: at least 1 writer makes the storm", o.Writers))
	}
	if o.Workloads < 1 {
		errs = append(errs, fmt.Errorf("--workloads %d: at least 1 workload must be scheduled", o.Workloads))
	}
	if o.HubMaxInFlight < 3 {
		errs = append(errs, fmt.Errorf("--hub-max-in-flight %d: at least 3 (a third of it serves mutating requests)", o.HubMaxInFlight))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	return errors.Join(errs...)
}

// StormReport is what one run measured.
type StormReport struct {
	Clusters       int `json:"clusters"`
	Works          int `json:"works"`
	Writers        int `json:"writers"`
	Workloads      int `json:"workloads"`
	HubMaxInFlight int `json:"hubMaxInFlight"`
	// Without and With are the phases without and with config/flowcontrol's
	// FlowSchemas.
	Without StormPhase `json:"without"`
	With    StormPhase `json:"with"`
}

// P99Ratio is how many times longer the p99 scheduling latency is without
// the FlowSchemas than with them (0 when not measured).
func (r StormReport) P99Ratio() float64 {
	if r.With.SchedulingP99Seconds <= 0 {
		return 0
	}
	return r.Without.SchedulingP99Seconds / r.With.SchedulingP99Seconds
}

// StormPhase is one phase: workloads scheduled under the storm.
type StormPhase struct {
	// StatusFlowSchema and StatusPriorityLevel are what the API server
	// classified the storm's writes into (from its response headers).
	StatusFlowSchema    string `json:"statusFlowSchema"`
	StatusPriorityLevel string `json:"statusPriorityLevel"`
	// SchedulingP50Seconds and SchedulingP99Seconds are percentiles of each
	// binding's wait from first seen to Scheduled.
	SchedulingP50Seconds float64 `json:"schedulingP50Seconds"`
	SchedulingP99Seconds float64 `json:"schedulingP99Seconds"`
	// ScheduledSeconds is from the first Deployment created until every
	// binding is Scheduled.
	ScheduledSeconds float64 `json:"scheduledSeconds"`
	// StatusWritesPerSecond is the rate of the storm's writes the hub
	// answered while the phase ran; StatusWriteErrors counts its refused
	// ones (429 Too Many Requests among them).
	StatusWritesPerSecond float64 `json:"statusWritesPerSecond"`
	StatusWriteErrors     int64   `json:"statusWriteErrors"`
}

// RunStorm starts the hub, the controllers and the simulated clusters,
// runs both phases and stops everything.
func RunStorm(ctx context.Context, o StormOptions) (*StormReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "shepherd-bench-storm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	log := o.Logger
	f, err := localfleet.Start(ctx, localfleet.Options{DataDir: dir, Logger: log, HubMaxRequestsInFlight: o.HubMaxInFlight})
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Stop() }()
	admin := f.Hub.RestConfig()
	admin.QPS, admin.Burst = 1000, 2000
	// The storm writes as the controller manager does, bounded by its
	// writers and the hub alone: no client-side rate limit.
	stormCfg := f.ControllersConfig()
	stormCfg.QPS = -1
	if _, err := startSimulated(ctx, admin, o.Clusters, log.WithName("simulated-agents")); err != nil {
		return nil, err
	}
	hub, err := client.New(admin, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	log.Info("creating the Works of the storm", "works", o.Works)
	works, err := createStormWorks(ctx, hub, o.Works, o.Clusters)
	if err != nil {
		return nil, err
	}
	schemas, err := flowSchemas()
	if err != nil {
		return nil, err
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	progress, err := watchProgress(watchCtx, admin)
	if err != nil {
		return nil, err
	}
	rep := &StormReport{Clusters: o.Clusters, Works: o.Works, Writers: o.Writers, Workloads: o.Workloads, HubMaxInFlight: o.HubMaxInFlight}
	for _, phase := range []struct {
		ns   string
		with bool
		out  *StormPhase
	}{{"storm-without", false, &rep.Without}, {"storm-with", true, &rep.With}} {
		if err := setFlowSchemas(ctx, hub, schemas, phase.with); err != nil {
			return nil, err
		}
		log.Info("scheduling under the storm", "flowSchemas", phase.with, "workloads", o.Workloads)
		if err := runPhase(ctx, hub, stormCfg, progress, works, phase.ns, phase.with, o, phase.out); err != nil {
			return nil, fmt.Errorf("phase %s: %w", phase.ns, err)
		}
	}
	return rep, nil
}

// flowSchemas are config/flowcontrol's FlowSchemas.
func flowSchemas() ([]*unstructured.Unstructured, error) {
	objs, err := install.Render(config.Manifests, "flowcontrol")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "FlowSchema" {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("config/flowcontrol has no FlowSchema")
	}
	return out, nil
}

// setFlowSchemas applies config/flowcontrol's FlowSchemas, or deletes them
// (their priority levels stay: without a schema, nothing reaches them).
func setFlowSchemas(ctx context.Context, hub client.Client, schemas []*unstructured.Unstructured, with bool) error {
	if with {
		return install.Apply(ctx, hub, schemas, io.Discard)
	}
	for _, s := range schemas {
		if err := hub.Delete(ctx, s.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting FlowSchema %s: %w", s.GetName(), err)
		}
	}
	return nil
}

// stormWork is a Work of the storm with its two status patches: Healthy
// and Unhealthy.
type stormWork struct {
	key             client.ObjectKey
	healthy, unwell []byte
}

// createStormWorks creates n Works, each a Deployment, spread over the
// simulated clusters, waits until the simulator acknowledged each
// (Applied, Healthy) and returns them with their flapping patches.
func createStormWorks(ctx context.Context, hub client.Client, n, clusters int) ([]stormWork, error) {
	out := make([]stormWork, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(creators)
	for i := range n {
		g.Go(func() error {
			ns := names.ExecutionNamespace(simulatedClusterName(i % clusters))
			name := fmt.Sprintf("storm-%04d", i)
			raw, err := json.Marshal(deployment("storm", i, 0, 1))
			if err != nil {
				return err
			}
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				return err
			}
			obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
			if raw, err = json.Marshal(obj); err != nil {
				return err
			}
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{stormLabel: "true"}},
				Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
			if err := hub.Create(gctx, w); err != nil {
				return fmt.Errorf("creating Work %s/%s: %w", ns, name, err)
			}
			ms, err := simulatedManifestStatus(0, raw)
			if err != nil {
				return err
			}
			sw := stormWork{key: client.ObjectKey{Namespace: ns, Name: name}}
			for _, health := range []policyv1alpha1.ResourceHealth{policyv1alpha1.ResourceHealthy, policyv1alpha1.ResourceUnhealthy} {
				ms.Health = health
				patch, err := json.Marshal(map[string]any{"status": map[string]any{"manifestStatuses": []workv1alpha1.ManifestStatus{ms}}})
				if err != nil {
					return err
				}
				if health == policyv1alpha1.ResourceHealthy {
					sw.healthy = patch
				} else {
					sw.unwell = patch
				}
			}
			out[i] = sw
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The simulator's acknowledgment comes first: a storm patch racing it
	// would be undone.
	err := poll(ctx, func() (bool, error) {
		var list workv1alpha1.WorkList
		if err := hub.List(ctx, &list, client.HasLabels{stormLabel}); err != nil {
			return false, err
		}
		acked := 0
		for i := range list.Items {
			if meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, workv1alpha1.WorkConditionApplied) {
				acked++
			}
		}
		return acked == n, nil
	})
	return out, err
}

// runPhase waits until the storm's writes are classified as the phase
// wants, runs the storm, creates the phase's workloads in namespace ns and
// measures until every binding is Scheduled.
func runPhase(ctx context.Context, hub client.Client, stormCfg *rest.Config, progress *progress, works []stormWork, ns string, with bool, o StormOptions, out *StormPhase) error {
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if err := hub.Create(ctx, policy(ns, 0)); err != nil {
		return err
	}
	// The API server applies a FlowSchema's change a moment after it is
	// written: the storm starts once its writes are classified as wanted.
	probe := &classification{}
	probeCfg := rest.CopyConfig(stormCfg)
	probeCfg.WrapTransport = probe.wrap
	probeClient, err := client.New(probeCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if err := poll(ctx, func() (bool, error) {
		if err := writeStatus(ctx, probeClient, works[0].key, works[0].healthy); err != nil {
			return false, err
		}
		out.StatusFlowSchema, out.StatusPriorityLevel, err = probe.names(ctx, hub)
		return (out.StatusPriorityLevel == "shepherd-status") == with, err
	}); err != nil {
		return fmt.Errorf("waiting for the storm's writes to be classified (FlowSchemas %v): %w", with, err)
	}
	storm, err := client.New(stormCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	stormCtx, stopStorm := context.WithCancel(ctx)
	var writes, failures atomic.Int64
	var wg sync.WaitGroup
	for w := range o.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; stormCtx.Err() == nil; i += o.Writers {
				sw := works[i%len(works)]
				patch := sw.unwell
				if (i/len(works))%2 == 1 {
					patch = sw.healthy
				}
				if err := writeStatus(stormCtx, storm, sw.key, patch); err != nil {
					if stormCtx.Err() == nil {
						failures.Add(1)
					}
					continue
				}
				writes.Add(1)
			}
		}()
	}
	defer func() { stopStorm(); wg.Wait() }()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(stormWarmUp):
	}

	begin, writesBegin, failuresBegin := time.Now(), writes.Load(), failures.Load()
	// One workload every stormCreateEvery, as a team deploying would: a
	// burst would measure the pipeline's backlog, not what the storm adds
	// to each binding's wait.
	tick := time.NewTicker(stormCreateEvery)
	defer tick.Stop()
	for d := range o.Workloads {
		if err := hub.Create(ctx, deployment(ns, d, 0, 2)); err != nil {
			return fmt.Errorf("creating deployment %d: %w", d, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := poll(waitCtx, func() (bool, error) { return allScheduled(waitCtx, progress, ns, o.Workloads) }); err != nil {
		return fmt.Errorf("waiting for every binding to be scheduled (--timeout %s): %w", o.Timeout, err)
	}
	elapsed := time.Since(begin)
	out.ScheduledSeconds = elapsed.Seconds()
	out.StatusWritesPerSecond = float64(writes.Load()-writesBegin) / elapsed.Seconds()
	out.StatusWriteErrors = failures.Load() - failuresBegin
	sched := progress.statsIn(ns, begin)
	out.SchedulingP50Seconds, out.SchedulingP99Seconds = sched.LatencyP50Seconds, sched.LatencyP99Seconds
	return nil
}

// writeStatus merge-patches a Work's status.
func writeStatus(ctx context.Context, c client.Client, key client.ObjectKey, patch []byte) error {
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, patch))
}

// classification records the FlowSchema and priority level UIDs the API
// server names in its response headers.
type classification struct {
	mu            sync.Mutex
	schema, level string
}

func (c *classification) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.schema = resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID)
			c.level = resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID)
			c.mu.Unlock()
		}
		return resp, err
	})
}

// names resolves the last response's UIDs to names.
func (c *classification) names(ctx context.Context, hub client.Reader) (schema, level string, err error) {
	c.mu.Lock()
	schemaUID, levelUID := c.schema, c.level
	c.mu.Unlock()
	if schemaUID == "" || levelUID == "" {
		return "", "", errors.New("the hub's answer names no FlowSchema: API Priority and Fairness is off")
	}
	var fss flowcontrolv1.FlowSchemaList
	if err := hub.List(ctx, &fss); err != nil {
		return "", "", err
	}
	var pls flowcontrolv1.PriorityLevelConfigurationList
	if err := hub.List(ctx, &pls); err != nil {
		return "", "", err
	}
	for _, fs := range fss.Items {
		if string(fs.UID) == schemaUID {
			schema = fs.Name
		}
	}
	for _, pl := range pls.Items {
		if string(pl.UID) == levelUID {
			level = pl.Name
		}
	}
	return schema, level, nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
