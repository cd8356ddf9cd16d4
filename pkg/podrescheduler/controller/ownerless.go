package controller

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
)

// maxPodNameLength keeps replacement names valid DNS labels, so that the
// pod's hostname (its name) is never truncated.
const maxPodNameLength = 63

// reconcileOwnerless reschedules a pod that has no controller and opted in
// through its own annotations. Nobody else would recreate it, so the
// controller does: it creates the replacement first, under a name derived
// from the original ("web-retry-1", "web-retry-2", ...), and deletes the
// failed pod only then. Creating first means the spec can never be lost
// between the two steps; a deterministic name makes the creation
// idempotent (an existing replacement made from this pod's UID is ours).
// Keeping the same name would need the old pod gone first, and its spec
// held in memory meanwhile.
func (r *Reconciler) reconcileOwnerless(ctx context.Context, pod *corev1.Pod, reason string) (reconcile.Result, error) {
	log := logf.FromContext(ctx).WithValues("pod", pod.Namespace+"/"+pod.Name)
	state, ok, err := annotations.Read(pod.Annotations)
	if !ok {
		return reconcile.Result{}, nil
	}
	if err != nil {
		r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonInvalidAnnotation, eventAction, "not rescheduling: %v", err)
		return reconcile.Result{}, nil
	}
	if state.Exhausted() {
		return reconcile.Result{}, nil
	}
	if d := r.wait(); d > 0 {
		return reconcile.Result{RequeueAfter: d}, nil
	}
	next := state.Record(pod.Spec.NodeName, string(pod.UID))
	if next.Exhausted() {
		// Left running; only its annotations record that the retries
		// are used up, so this failure is not handled again.
		if err := r.writeState(ctx, pod, next); err != nil {
			return reconcile.Result{}, err
		}
		log.Info("pod failed after the last retry; leaving it alone", "retries", next.Retries)
		r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonRetryLimitReached, eventAction,
			"failed on node %s (%s) after %d reschedules; retries exhausted", pod.Spec.NodeName, reason, next.Retries)
		failures.WithLabelValues(reason, outcomeLimitReached).Inc()
		return reconcile.Result{}, nil
	}
	replacement := recreated(pod, next)
	switch err := r.client.Create(ctx, replacement); {
	case apierrors.IsAlreadyExists(err):
		existing := &corev1.Pod{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(replacement), existing); err != nil {
			return reconcile.Result{}, err
		}
		if existing.Annotations[annotations.RescheduledFrom] != string(pod.UID) {
			r.recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonNameTaken, eventAction,
				"cannot recreate as %s: a pod of that name already exists", replacement.Name)
			return reconcile.Result{}, nil
		}
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("creating replacement pod %s: %w", replacement.Name, err)
	default:
		log.Info("recreated failed pod", "replacement", replacement.Name, "attempt", next.Count, "retries", next.Retries, "nodesTried", next.Nodes)
		r.recorder.Eventf(pod, replacement, corev1.EventTypeNormal, ReasonRecreated, eventAction,
			"failed on node %s (%s); recreated as %s away from %v (reschedule %d of %d)",
			pod.Spec.NodeName, reason, replacement.Name, next.Nodes, next.Count, next.Retries)
		failures.WithLabelValues(reason, outcomeRecreated).Inc()
	}
	return reconcile.Result{}, r.deletePod(ctx, pod)
}

// recreated is the replacement of old after state s: the same labels,
// annotations and spec, unbound, carrying s and the nodes to avoid.
// Status, UID, resourceVersion and owner-less metadata such as finalizers
// are not carried over; ephemeral containers cannot be set at creation.
func recreated(old *corev1.Pod, s annotations.State) *corev1.Pod {
	base := old.Annotations[annotations.OriginalName]
	if base == "" {
		base = old.Name
	}
	ann := maps.Clone(old.Annotations)
	s.Write(ann)
	ann[annotations.ExcludedNodes] = annotations.FormatList(s.Nodes)
	ann[annotations.RescheduledFrom] = string(old.UID)
	ann[annotations.OriginalName] = base
	spec := old.Spec.DeepCopy()
	spec.NodeName = ""
	spec.EphemeralContainers = nil
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   old.Namespace,
			Name:        replacementName(base, s.Count),
			Labels:      maps.Clone(old.Labels),
			Annotations: ann,
		},
		Spec: *spec,
	}
}

// replacementName is "<base>-retry-<n>", base shortened to keep the name a
// valid DNS label.
func replacementName(base string, n int) string {
	suffix := "-retry-" + strconv.Itoa(n)
	if len(base)+len(suffix) > maxPodNameLength {
		base = strings.TrimRight(base[:maxPodNameLength-len(suffix)], "-.")
	}
	return base + suffix
}
