package webhook

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload"
)

// Results counted by requests.
const (
	resultPatched = "patched" // exclusions copied onto the pod
	resultSkipped = "skipped" // nothing to copy
	resultError   = "error"   // allowed unchanged after an error
)

var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_podrescheduler_webhook_requests_total",
	Help: "Pod creations seen by the pod rescheduler's webhook, by result (patched, skipped, error).",
}, []string{"result"})

func init() {
	metrics.Registry.MustRegister(requests)
}

// mutator copies a workload's nodes-tried list onto its new pods.
type mutator struct {
	// cache reads workload metadata first; nil reads everything through
	// direct.
	cache client.Reader
	// direct reads from the API server: what cache lacks, and the retry
	// state of opted-in workloads (see optedInWorkload).
	direct client.Reader
	log    logr.Logger
}

// Handle admits every pod. When the pod's workload opted in, has failed
// pods recorded and has retries left, the pod gets the nodes to avoid
// (excluded-nodes) and the workload's retry state. Any error admits the
// pod unchanged: rescheduling is best effort and must never stand in the
// way of creating pods.
func (m *mutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp, result, err := m.mutate(ctx, req)
	requests.WithLabelValues(result).Inc()
	if err != nil {
		m.log.Error(err, "admitting pod unchanged", "namespace", req.Namespace, "uid", req.UID)
		return admission.Allowed("pod rescheduler: " + err.Error())
	}
	return resp
}

func (m *mutator) mutate(ctx context.Context, req admission.Request) (admission.Response, string, error) {
	if req.Operation != admissionv1.Create || req.Kind.Kind != "Pod" {
		return admission.Allowed(""), resultSkipped, nil
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return admission.Response{}, resultError, err
	}
	// The pod may not have its namespace set yet; its owners are in the
	// request's namespace.
	pod.Namespace = req.Namespace
	wl, err := m.optedInWorkload(ctx, pod)
	if err != nil {
		return admission.Response{}, resultError, err
	}
	if wl == nil {
		return admission.Allowed(""), resultSkipped, nil
	}
	state, ok, err := annotations.Read(wl.GetAnnotations())
	if !ok || err != nil || len(state.Nodes) == 0 || state.Exhausted() {
		// A malformed annotation is reported by the controller, on the
		// workload; here it just means nothing to copy.
		return admission.Allowed(""), resultSkipped, nil
	}
	m.log.V(1).Info("excluding nodes tried by the workload", "namespace", req.Namespace, "pod", podName(pod),
		"workload", workload.Describe(wl), "excludedNodes", state.Nodes)
	return admission.Patched("", annotationPatch(pod.Annotations, map[string]string{
		annotations.ExcludedNodes:     annotations.FormatList(state.Nodes),
		annotations.SchedulingRetries: strconv.Itoa(state.Retries),
		annotations.ReschedulingCount: strconv.Itoa(state.Count),
	})...), resultPatched, nil
}

// annotationPatch returns the JSON patch setting set on a pod whose
// annotations are existing. The patch touches nothing else: re-encoding
// the whole pod would also rewrite fields this webhook does not know.
func annotationPatch(existing, set map[string]string) []jsonpatch.JsonPatchOperation {
	if existing == nil {
		return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/metadata/annotations", Value: set}}
	}
	ops := make([]jsonpatch.JsonPatchOperation, 0, len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		// "add" replaces an existing member (RFC 6902 4.1).
		ops = append(ops, jsonpatch.JsonPatchOperation{Operation: "add", Path: "/metadata/annotations/" + jsonpointer.Escape(k), Value: set[k]})
	}
	return ops
}

// podName is the pod's name, or its generateName prefix before the
// apiserver has named it.
func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Name
	}
	return pod.GenerateName
}
