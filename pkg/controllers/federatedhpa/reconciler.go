package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "federatedhpa"

// FieldManager writes the targets' replicas.
const FieldManager = "shepherd-federatedhpa"

// Event reasons, as a HorizontalPodAutoscaler's.
const (
	EventSuccessfulRescale = "SuccessfulRescale"
	EventFailedRescale     = "FailedRescale"
	EventFailedGetMetrics  = "FailedGetMetrics"
)

// Reconciler computes FederatedHPAs.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	opts     Options

	mu      sync.Mutex
	history map[types.NamespacedName]history
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	hpa := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.client.Get(ctx, req.NamespacedName, hpa); err != nil {
		if apierrors.IsNotFound(err) {
			r.setHistory(req.NamespacedName, nil)
			forget(req.Namespace, req.Name)
			if err := r.releaseSamples(ctx, req.Namespace, req.Name, nil); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if hpa.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	now := r.opts.Now()
	orig := hpa.DeepCopy()
	st := &hpa.Status
	target, err := r.target(ctx, hpa)
	if err != nil {
		setCondition(st, condition{autoscalingv1alpha1.ConditionAbleToScale, corev1.ConditionFalse, "FailedGetScale", err.Error()}, now)
		r.recorder.Eventf(hpa, nil, corev1.EventTypeWarning, "FailedGetScale", "Compute", "%s", err.Error())
		return r.finish(ctx, orig, hpa)
	}
	var clusters []cluster
	var conflicts []string
	// Without its binding the target runs nowhere yet: nothing to measure.
	placed, err := r.placementOf(ctx, target)
	if err == nil {
		clusters, conflicts = r.measure(ctx, hpa, target, placed.clusters)
	}
	in := input{spec: hpa.Spec, current: target.replicas, status: target.statusReplicas, clusters: clusters, unplaced: placed.unplaced,
		history: r.getHistory(req.NamespacedName), now: now, tolerance: r.opts.Tolerance, downWindow: r.opts.DownscaleWindow}
	o := decide(in)
	for _, c := range o.conditions {
		setCondition(st, c, now)
	}
	if c := findCondition(o.conditions, autoscalingv1alpha1.ConditionScalingActive); c != nil && c.status == corev1.ConditionFalse && c.reason == "FailedGetMetrics" {
		r.recorder.Eventf(hpa, nil, corev1.EventTypeWarning, EventFailedGetMetrics, "Compute", "%s", c.message)
	}
	conflict := condition{autoscalingv1alpha1.ConditionMemberAutoscalerConflict, corev1.ConditionFalse, "NoMemberAutoscaler", "no member runs a HorizontalPodAutoscaler of this workload"}
	if len(conflicts) > 0 {
		conflict.status, conflict.reason = corev1.ConditionTrue, "MemberAutoscalerFound"
		conflict.message = "HorizontalPodAutoscalers of this workload in members change its replicas there too: " + strings.Join(conflicts, ", ") + "; delete them, or this FederatedHPA"
	}
	setCondition(st, conflict, now)
	st.CurrentReplicas, st.DesiredReplicas = target.replicas, o.desired
	st.CurrentMetrics, st.Clusters = o.statuses, o.clusters
	st.ObservedGeneration = &hpa.Generation
	if o.reason != "" {
		if err := r.scale(ctx, target, o.desired); err != nil {
			msg := fmt.Sprintf("failed to set the replicas of %s %s to %d: %v", target.ref.Kind, target.ref.Name, o.desired, err)
			setCondition(st, condition{autoscalingv1alpha1.ConditionAbleToScale, corev1.ConditionFalse, "FailedUpdateScale", msg}, now)
			r.recorder.Eventf(hpa, nil, corev1.EventTypeWarning, EventFailedRescale, "Scale", "%s", msg)
			r.setHistory(req.NamespacedName, &o.history)
			return r.finish(ctx, orig, hpa)
		}
		o.history = o.history.record(target.replicas, o.desired, now)
		st.LastScaleTime = &metav1.Time{Time: now}
		setCondition(st, condition{autoscalingv1alpha1.ConditionAbleToScale, corev1.ConditionTrue, "SucceededRescale",
			fmt.Sprintf("the HPA controller was able to update the target scale to %d", o.desired)}, now)
		// The target is the event's related object: its resourceVersion,
		// new at every rescale, keeps each rescale an event of its own. The
		// recorder folds events of one key (regarding, related, reason,
		// action) into a series that keeps the first note, which would lose
		// the counts of a rescale read from a cache that has not seen the
		// previous status yet.
		r.recorder.Eventf(hpa, target.obj, corev1.EventTypeNormal, EventSuccessfulRescale, "Scale", "%s", RescaleNote(target.replicas, o.desired, o.reason))
		log.Info("scaled", "target", target.ref.Kind+"/"+target.ref.Name, "from", target.replicas, "to", o.desired, "reason", o.reason)
	}
	r.setHistory(req.NamespacedName, &o.history)
	report(hpa)
	return r.finish(ctx, orig, hpa)
}

// finish writes the status when it changed and comes back after the sync period.
func (r *Reconciler) finish(ctx context.Context, orig, hpa *autoscalingv1alpha1.FederatedHPA) (reconcile.Result, error) {
	if err := r.client.Status().Patch(ctx, hpa, client.MergeFrom(orig), client.FieldOwner(FieldManager)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.opts.SyncPeriod}, nil
}

// target is the workload a FederatedHPA scales, as read on the hub.
type target struct {
	ref                     autoscalingv2.CrossVersionObjectReference
	obj                     *unstructured.Unstructured
	replicas                int32
	statusReplicas          int32
	selector                labels.Selector
	selectorText, namespace string
}

// target reads the workload a FederatedHPA names, in its namespace.
func (r *Reconciler) target(ctx context.Context, hpa *autoscalingv1alpha1.FederatedHPA) (*target, error) {
	ref := hpa.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("spec.scaleTargetRef.apiVersion %q: %v", ref.APIVersion, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: hpa.Namespace, Name: ref.Name}, u); err != nil {
		return nil, fmt.Errorf("reading %s %s/%s named by spec.scaleTargetRef: %w", ref.Kind, hpa.Namespace, ref.Name, err)
	}
	replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if err != nil || !found {
		return nil, fmt.Errorf("%s %s/%s has no spec.replicas: a FederatedHPA scales workloads with replicas", ref.Kind, hpa.Namespace, ref.Name)
	}
	status, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	sel, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf("%s %s/%s has no spec.selector to find its pods by", ref.Kind, hpa.Namespace, ref.Name)
	}
	ls := &metav1.LabelSelector{}
	if err := runtimeConvert(sel, ls); err != nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector: %v", ref.Kind, hpa.Namespace, ref.Name, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector: %v", ref.Kind, hpa.Namespace, ref.Name, err)
	}
	return &target{ref: ref, obj: u, replicas: int32(replicas), statusReplicas: int32(status), selector: selector, selectorText: selector.String(), namespace: hpa.Namespace}, nil
}

// measure reads each member the target runs in (names): its pods and their
// metrics, and the member's own autoscalers of the target (conflicts,
// "cluster/name"). A member that cannot be read is left out, and says
// why; one whose values of a metric are missing is left out of that
// metric, and says why.
func (r *Reconciler) measure(ctx context.Context, hpa *autoscalingv1alpha1.FederatedHPA, t *target, names []string) ([]cluster, []string) {
	metrics := hpa.Spec.Metrics
	if len(metrics) == 0 {
		metrics = defaultMetrics()
	}
	var out []cluster
	var conflicts []string
	now := r.opts.Now()
	w := Workload{Namespace: t.namespace, Selector: t.selector, Ref: t.ref}
	custom := customRequests(metrics)
	log := logf.FromContext(ctx)
	asked := map[client.ObjectKey]bool{}
	defer func() {
		if err := r.releaseSamples(ctx, hpa.Namespace, hpa.Name, asked); err != nil {
			log.Error(err, "releasing the pod metrics samples of Works no longer measured")
		}
	}()
	for _, name := range names {
		mc := &clusterv1alpha1.Cluster{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			out = append(out, cluster{name: name, excluded: "cluster not readable: " + err.Error()})
			continue
		}
		if mc.Spec.SyncMode == clusterv1alpha1.Pull {
			key, err := r.askSample(ctx, hpa.Name, w, name, custom)
			asked[key] = true
			if err != nil {
				log.Error(err, "asking the agent for pod metrics", "cluster", name)
			}
		}
		pods, err := r.opts.Members.Pods(ctx, mc, w)
		if err != nil {
			out = append(out, cluster{name: name, excluded: exclusion(err, "unreachable: ")})
			continue
		}
		c := samples(metrics, r.read(ctx, mc, w, metrics, pods), now, r.opts.MetricMaxAge)
		c.name = name
		if hpas, err := r.opts.Members.HorizontalPodAutoscalers(ctx, mc, w); err == nil {
			for _, h := range hpas {
				if sameTarget(h.Spec.ScaleTargetRef, t.ref) {
					conflicts = append(conflicts, name+"/"+h.Name)
				}
			}
		}
		out = append(out, c)
	}
	return out, conflicts
}

// read reads in a member what metrics need of the workload's pods: their
// PodMetrics for Resource and ContainerResource metrics, the values of
// Pods and Object metrics (whose selectors parse).
func (r *Reconciler) read(ctx context.Context, mc *clusterv1alpha1.Cluster, w Workload, metrics []autoscalingv2.MetricSpec, pods []corev1.Pod) reading {
	in := reading{pods: pods, custom: make([][]custommetricsv1beta2.MetricValue, len(metrics)), customErr: make([]error, len(metrics))}
	if needsPodMetrics(metrics) {
		in.podMetrics, in.podMetricsErr = r.opts.Members.PodMetrics(ctx, mc, w)
	}
	for i, m := range metrics {
		if m.Type != autoscalingv2.PodsMetricSourceType && m.Type != autoscalingv2.ObjectMetricSourceType {
			continue
		}
		if req, err := customRequest(m); err == nil {
			in.custom[i], in.customErr[i] = r.opts.Members.CustomMetric(ctx, mc, w, req)
		}
	}
	return in
}

// exclusion says why a member that could not be read is left out: an
// excludedError's words as they are, others after prefix.
func exclusion(err error, prefix string) string {
	var ex *excludedError
	if errors.As(err, &ex) {
		return ex.Error()
	}
	return prefix + err.Error()
}

// sameTarget says whether a member autoscaler's reference names the
// workload ref names (same group, kind and name).
func sameTarget(a, b autoscalingv2.CrossVersionObjectReference) bool {
	ga, _ := schema.ParseGroupVersion(a.APIVersion)
	gb, _ := schema.ParseGroupVersion(b.APIVersion)
	return ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

// scale sets the target's replicas through its scale subresource: a merge
// patch of spec.replicas alone.
func (r *Reconciler) scale(ctx context.Context, t *target, replicas int32) error {
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
	scale := t.obj.DeepCopy()
	return r.client.SubResource("scale").Patch(ctx, scale, patch, client.FieldOwner(FieldManager))
}

func (r *Reconciler) getHistory(key types.NamespacedName) history {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.history[key]
}

func (r *Reconciler) setHistory(key types.NamespacedName, h *history) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h == nil {
		delete(r.history, key)
		return
	}
	r.history[key] = *h
}

// report sets the Prometheus series of a computed FederatedHPA.
func report(hpa *autoscalingv1alpha1.FederatedHPA) {
	desiredReplicas.WithLabelValues(hpa.Namespace, hpa.Name).Set(float64(hpa.Status.DesiredReplicas))
	currentReplicas.WithLabelValues(hpa.Namespace, hpa.Name).Set(float64(hpa.Status.CurrentReplicas))
	for _, c := range hpa.Status.Clusters {
		for _, res := range c.Resources {
			if res.AverageUtilization != nil {
				clusterUtilization.WithLabelValues(hpa.Namespace, hpa.Name, c.Name, string(res.Name)).Set(float64(*res.AverageUtilization))
			}
		}
	}
}
