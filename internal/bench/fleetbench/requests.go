package fleetbench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// RequestCount is how many requests of one verb on one resource the API
// servers of the fleet served during the measured part of a run.
type RequestCount struct {
	Verb        string `json:"verb"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Count       int    `json:"count"`
}

// requestKey names a series of apiserver_request_total without its code
// and the other labels a run does not compare.
type requestKey struct{ verb, group, resource, subresource string }

// apiRequests reads apiserver_request_total from the hub's /metrics (the
// process-wide registry, so every API server of a local fleet counts),
// summed over response codes, scopes and components. Watches are left
// out: they count connections, not work.
func apiRequests(ctx context.Context, cfg *rest.Config) (map[requestKey]float64, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := dc.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the hub's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the hub's metrics: %w", err)
	}
	out := map[requestKey]float64{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		k := requestKey{verb: label(m, "verb"), group: label(m, "group"), resource: label(m, "resource"), subresource: label(m, "subresource")}
		if k.verb == "WATCH" || k.resource == "" {
			continue
		}
		out[k] += m.GetCounter().GetValue()
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// requestDelta returns the requests served between two readings, most
// first (ties by verb, resource and subresource), the ones above zero
// only; a resource of the same name in two groups counts as one.
func requestDelta(before, after map[requestKey]float64) []RequestCount {
	byName := map[requestKey]int{}
	for k, v := range after {
		if n := int(v - before[k]); n > 0 {
			byName[requestKey{verb: k.verb, resource: k.resource, subresource: k.subresource}] += n
		}
	}
	var out []RequestCount
	for k, n := range byName {
		out = append(out, RequestCount{Verb: k.verb, Resource: k.resource, Subresource: k.subresource, Count: n})
	}
	slices.SortFunc(out, func(a, b RequestCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Verb, b.Verb),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Subresource, b.Subresource))
	})
	return out
}

// hubAndMemberWrites sums the write requests between two readings: those
// of Shepherd's API groups (served by the hub alone) and the others (in a
// local fleet of API-only members, the members' API servers serve nearly
// all of them; the hub's own Leases are among them and are steady, so an
// idle reading taken before subtracts them).
func hubAndMemberWrites(before, after map[requestKey]float64) (hub, member float64) {
	for k, v := range after {
		if !writeVerbs[k.verb] {
			continue
		}
		if strings.HasSuffix(k.group, "shepherd.io") {
			hub += v - before[k]
		} else {
			member += v - before[k]
		}
	}
	return hub, member
}

// writesButLeases keeps the write requests of reqs, in their order, but
// the Leases', which it counts apart: the simulated agents' heartbeats
// and the controllers' leader election go on whatever the run does.
func writesButLeases(reqs []RequestCount) (writes []RequestCount, leases int) {
	writes = []RequestCount{} // none is a list in the JSON reports
	for _, q := range reqs {
		switch {
		case !writeVerbs[q.Verb]:
		case q.Resource == "leases":
			leases += q.Count
		default:
			writes = append(writes, q)
		}
	}
	return writes, leases
}

// RequestRate is the write requests of one verb on one resource per
// workload.
type RequestRate struct {
	Verb        string  `json:"verb"`
	Resource    string  `json:"resource"`
	Subresource string  `json:"subresource,omitempty"`
	PerWorkload float64 `json:"perWorkload"`
}

// writeVerbs are the verbs of apiserver_request_total that write.
var writeVerbs = map[string]bool{"POST": true, "APPLY": true, "PATCH": true, "PUT": true, "DELETE": true, "DELETECOLLECTION": true}

// writesPer divides the write requests among n workloads, keeping the
// order of reqs (most first).
func writesPer(reqs []RequestCount, n int) []RequestRate {
	out := []RequestRate{}
	for _, r := range reqs {
		if writeVerbs[r.Verb] {
			out = append(out, RequestRate{Verb: r.Verb, Resource: r.Resource, Subresource: r.Subresource,
				PerWorkload: float64(r.Count) / float64(max(n, 1))})
		}
	}
	return out
}

// ReconcileCount is how many times one controller reconciled during the
// measured part of a run, how many of those ended in an error, and where
// its time went: the mean time a reconcile took and the mean time a
// request waited in the controller's queue before a worker took it. A
// stage whose queue wait is long is the one the pipeline waits for; one
// whose reconciles are long waits on its API calls.
type ReconcileCount struct {
	Controller string `json:"controller"`
	Total      int    `json:"total"`
	Errors     int    `json:"errors"`
	// MeanSeconds is controller_runtime_reconcile_time_seconds' mean.
	MeanSeconds float64 `json:"meanSeconds,omitempty"`
	// MeanQueueSeconds is workqueue_queue_duration_seconds' mean.
	MeanQueueSeconds float64 `json:"meanQueueSeconds,omitempty"`
}

// reconcileReading is one controller's counters at one moment.
type reconcileReading struct {
	total, errors float64
	// seconds sums the reconciles' times; queued counts the requests
	// taken off the queue and queueSeconds sums their waits.
	seconds, queued, queueSeconds float64
}

// reconciles reads controller-runtime's reconcile and work queue
// counters from this process's registry (the controllers of a local fleet
// run in it), by controller.
func reconciles() (map[string]reconcileReading, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]reconcileReading{}
	for _, fam := range families {
		for _, m := range fam.GetMetric() {
			name := label(m, "controller")
			c := out[name]
			switch fam.GetName() {
			case "controller_runtime_reconcile_total":
				c.total += m.GetCounter().GetValue()
				if label(m, "result") == "error" {
					c.errors += m.GetCounter().GetValue()
				}
			case "controller_runtime_reconcile_time_seconds":
				c.seconds += m.GetHistogram().GetSampleSum()
			case "workqueue_queue_duration_seconds":
				c.queued += float64(m.GetHistogram().GetSampleCount())
				c.queueSeconds += m.GetHistogram().GetSampleSum()
			default:
				continue
			}
			out[name] = c
		}
	}
	return out, nil
}

// reconcileDelta returns the reconciles between two readings, most first,
// ties by controller name; controllers that did not reconcile are left
// out.
func reconcileDelta(before, after map[string]reconcileReading) []ReconcileCount {
	var out []ReconcileCount
	for name, v := range after {
		b := before[name]
		n := int(v.total - b.total)
		if n <= 0 {
			continue
		}
		c := ReconcileCount{Controller: name, Total: n, Errors: int(v.errors - b.errors),
			MeanSeconds: (v.seconds - b.seconds) / float64(n)}
		if q := v.queued - b.queued; q > 0 {
			c.MeanQueueSeconds = (v.queueSeconds - b.queueSeconds) / q
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ReconcileCount) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Controller, b.Controller))
	})
	return out
}
