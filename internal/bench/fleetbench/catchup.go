package fleetbench

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
)

// A controller manager started anew lists everything the hub holds into
// empty caches and queues, and is of no use until it has been through it
// all: Karmada measured that for 30,000 workloads (over 20 minutes before
// v1.17, about 5 since). restartControllers times it for Shepherd.
//
// Caught up, precisely: after the new manager starts, all of these hold
// and have held for the quiet window:
//
//  1. the binding controller (bindingController) has reconciled at least
//     as many times as the hub holds ResourceBindings: it queues each one
//     it lists at start, so fewer reconciles mean a binding not reached
//     yet (this also keeps the clock running while the caches sync and
//     the queues are still empty);
//  2. the work queue of each controller of the pipeline
//     (pipelineControllers) is empty and none of them is reconciling, as
//     controller-runtime's workqueue_depth and
//     controller_runtime_active_workers say in this process (less what
//     the stopped manager left in them: the gauges are shared by name);
//  3. the hub served no write of a binding, a Work or a template
//     (pipelineResources), as its apiserver_request_total counts them.
//
// They are read every catchUpPoll; the time reported runs from the new
// manager's start to the last reading at which one of them did not hold:
// the quiet window is not counted. Controllers that act on a period
// (cluster status, orphans, failover) are left out of 2: they are never
// idle for long, and what they do is no part of catching up.

// catchUpPoll is how often the conditions are read: the time is known to
// within it.
const catchUpPoll = 500 * time.Millisecond

// bindingController is the binding controller of ResourceBindings, as
// controller-runtime's metrics name it (binding.ControllerName and the
// kind).
const bindingController = "binding-resourcebinding"

// pipelineControllers carry a template to its Works and their status
// back: what a new manager has to go through.
var pipelineControllers = []string{
	"detector",
	"scheduler-resourcebinding",
	bindingController,
	"dependencies",
	"dependencies-attached",
	"work-status",
	"policystatus",
}

// pipelineResources are what those controllers write: a write of one
// means the catch-up is still changing something.
var pipelineResources = map[string]bool{"resourcebindings": true, "works": true, "deployments": true, "configmaps": true}

// CatchUpReport is how a controller manager started anew caught up with
// what the hub holds.
type CatchUpReport struct {
	// Bindings the hub held.
	Bindings int `json:"bindings"`
	// StopSeconds is how long the running manager took to stop.
	StopSeconds float64 `json:"stopSeconds"`
	// CaughtUpSeconds runs from the new manager's start until it caught
	// up (within catchUpPoll), the QuietSeconds of the window not counted.
	CaughtUpSeconds float64 `json:"caughtUpSeconds"`
	QuietSeconds    float64 `json:"quietSeconds"`
	// Reconciles are each controller's from the start until caught up,
	// most first.
	Reconciles []ReconcileCount `json:"reconciles"`
	// Writes are the hub's write requests over the same time, by verb and
	// resource, most first, Lease renewals apart: what the new manager
	// (and the simulated agents, answering its Works) rewrote.
	Writes []RequestCount `json:"writes"`
}

// restartControllers stops the controller manager of f, starts a new one
// and waits until it has caught up, or timeout. hub lists the bindings;
// cfg reads the hub's metrics.
func restartControllers(ctx context.Context, f *localfleet.Fleet, cfg *rest.Config, hub client.Reader, quiet, timeout time.Duration, log logr.Logger) (*CatchUpReport, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs); err != nil {
		return nil, err
	}
	rep := &CatchUpReport{Bindings: len(rbs.Items), QuietSeconds: quiet.Seconds()}
	log.Info("stopping the controller manager")
	stopping := time.Now()
	if err := f.StopControllers(); err != nil {
		return nil, err
	}
	rep.StopSeconds = time.Since(stopping).Seconds()
	load0, rec0, req0, err := catchUpReadings(ctx, cfg)
	if err != nil {
		return nil, err
	}
	log.Info("starting a new controller manager", "bindings", rep.Bindings)
	start := time.Now()
	if err := f.StartControllers(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lastBusy, written := start, pipelineWrites(req0)
	rec, req, why := rec0, req0, "not read yet"
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the new controller manager did not catch up within %s: %s", timeout, why)
		case <-time.After(catchUpPoll):
		}
		now := time.Now()
		var load map[string]float64
		if load, rec, req, err = catchUpReadings(ctx, cfg); err != nil {
			return nil, err
		}
		w := pipelineWrites(req)
		why = busy(rep.Bindings, rec[bindingController].total-rec0[bindingController].total, load, load0, w-written)
		written = w
		if why != "" {
			lastBusy = now
			continue
		}
		if now.Sub(lastBusy) >= quiet {
			break
		}
	}
	rep.CaughtUpSeconds = lastBusy.Sub(start).Seconds()
	rep.Reconciles = reconcileDelta(rec0, rec)
	rep.Writes, _ = writesButLeases(requestDelta(req0, req))
	log.Info("caught up", "seconds", rep.CaughtUpSeconds)
	return rep, nil
}

// busy says what keeps a new manager from having caught up at one reading
// ("" when nothing does): bindingReconciles since its start of bindings,
// its controllers' load against what the stopped one left, and the
// pipeline's writes since the reading before.
func busy(bindings int, bindingReconciles float64, load, left map[string]float64, writes float64) string {
	if bindingReconciles < float64(bindings) {
		return fmt.Sprintf("the binding controller reconciled %.0f times, the hub holds %d bindings", bindingReconciles, bindings)
	}
	for _, c := range pipelineControllers {
		if n := load[c] - left[c]; n > 0 {
			return fmt.Sprintf("controller %s has %.0f requests queued or under way", c, n)
		}
	}
	if writes > 0 {
		return fmt.Sprintf("the hub served %.0f writes of bindings, Works or templates since the reading before", writes)
	}
	return ""
}

// catchUpReadings reads the controllers' load (queued and under way, by
// controller) and reconciles from this process's registry, and the hub's
// requests from its metrics.
func catchUpReadings(ctx context.Context, cfg *rest.Config) (map[string]float64, map[string]reconcileReading, map[requestKey]float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, nil, nil, err
	}
	load := map[string]float64{}
	for _, fam := range families {
		switch fam.GetName() {
		case "workqueue_depth":
			for _, m := range fam.GetMetric() {
				load[label(m, "name")] += m.GetGauge().GetValue()
			}
		case "controller_runtime_active_workers":
			for _, m := range fam.GetMetric() {
				load[label(m, "controller")] += m.GetGauge().GetValue()
			}
		}
	}
	rec, err := reconciles()
	if err != nil {
		return nil, nil, nil, err
	}
	req, err := apiRequests(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return load, rec, req, nil
}

// pipelineWrites sums the write requests of pipelineResources.
func pipelineWrites(reqs map[requestKey]float64) float64 {
	n := 0.0
	for k, v := range reqs {
		if writeVerbs[k.verb] && pipelineResources[k.resource] {
			n += v
		}
	}
	return n
}
