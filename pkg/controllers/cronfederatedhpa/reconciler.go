package cronfederatedhpa

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "cronfederatedhpa"

// FieldManager writes the targets' replicas and FederatedHPAs' bounds.
const FieldManager = "shepherd-cronfederatedhpa"

// Event reasons.
const (
	EventScheduledScale       = "ScheduledScale"
	EventFailedScheduledScale = "FailedScheduledScale"
	EventInvalidRule          = "InvalidRule"
)

// karmadaGroup is Karmada's autoscaling group: a scaleTargetRef of kind
// FederatedHPA in it, as Karmada's examples write, names Shepherd's.
const karmadaGroup = "autoscaling.karmada.io"

// Reconciler runs the rules of CronFederatedHPAs.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	opts     Options
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	cr := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := r.client.Get(ctx, req.NamespacedName, cr); err != nil || cr.DeletionTimestamp != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := r.opts.Now()
	orig := cr.DeepCopy()
	byRule := map[string]*autoscalingv1alpha1.ExecutionHistory{}
	for i := range cr.Status.ExecutionHistories {
		byRule[cr.Status.ExecutionHistories[i].RuleName] = &cr.Status.ExecutionHistories[i]
	}
	var ds []decision
	var out []autoscalingv1alpha1.ExecutionHistory
	for _, rule := range cr.Spec.Rules {
		d := decide(rule, byRule[rule.Name], cr.CreationTimestamp.Time, now, r.opts.Location)
		ds = append(ds, d)
		var h autoscalingv1alpha1.ExecutionHistory
		if cur := byRule[rule.Name]; cur != nil {
			h = *cur.DeepCopy()
		}
		if d.err != "" {
			r.recorder.Eventf(cr, nil, corev1.EventTypeWarning, EventInvalidRule, "Schedule", "%s", d.err)
			h.RuleName, h.NextExecutionTime = rule.Name, nil
			out = append(out, h)
			continue
		}
		var a applied
		if d.run {
			a = r.apply(ctx, cr, rule)
			if a.err != "" {
				r.recorder.Eventf(cr, nil, corev1.EventTypeWarning, EventFailedScheduledScale, "Scale", "rule %s (scheduled %s): %s", rule.Name, d.scheduled.UTC().Format(time.RFC3339), a.err)
			} else {
				r.recorder.Eventf(cr, nil, corev1.EventTypeNormal, EventScheduledScale, "Scale", "rule %s (scheduled %s): %s", rule.Name, d.scheduled.UTC().Format(time.RFC3339), describe(a))
			}
			log.Info("rule run", "rule", rule.Name, "scheduled", d.scheduled, "late", d.late, "error", a.err)
		}
		out = append(out, record(h, rule, d, a, now))
	}
	cr.Status.ExecutionHistories = out
	if !equality.Semantic.DeepEqual(orig.Status, cr.Status) {
		if err := r.client.Status().Patch(ctx, cr, client.MergeFrom(orig), client.FieldOwner(FieldManager)); err != nil {
			return reconcile.Result{}, err
		}
	}
	if w := wake(ds); !w.IsZero() {
		return reconcile.Result{RequeueAfter: max(w.Sub(r.opts.Now()), time.Second)}, nil
	}
	return reconcile.Result{}, nil
}

// apply sets what rule says on the target.
func (r *Reconciler) apply(ctx context.Context, cr *autoscalingv1alpha1.CronFederatedHPA, rule autoscalingv1alpha1.CronFederatedHPARule) applied {
	ref := cr.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return applied{err: fmt.Sprintf("spec.scaleTargetRef.apiVersion %q: %v", ref.APIVersion, err)}
	}
	key := client.ObjectKey{Namespace: cr.Namespace, Name: ref.Name}
	if ref.Kind == "FederatedHPA" && (gv.Group == autoscalingv1alpha1.GroupName || gv.Group == karmadaGroup) {
		return r.applyToFederatedHPA(ctx, key, rule)
	}
	if rule.TargetReplicas == nil {
		return applied{err: fmt.Sprintf("spec.rules[%s].targetReplicas is required to scale %s %s (targetMinReplicas and targetMaxReplicas are for a FederatedHPA)", rule.Name, ref.Kind, ref.Name)}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.client.Get(ctx, key, u); err != nil {
		return applied{err: fmt.Sprintf("reading %s %s named by spec.scaleTargetRef: %v", ref.Kind, key, err)}
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, *rule.TargetReplicas))
	if err := r.client.SubResource("scale").Patch(ctx, u, patch, client.FieldOwner(FieldManager)); err != nil {
		return applied{err: fmt.Sprintf("setting the replicas of %s %s: %v", ref.Kind, key, err)}
	}
	return applied{replicas: rule.TargetReplicas}
}

// applyToFederatedHPA sets a FederatedHPA's minReplicas and maxReplicas.
func (r *Reconciler) applyToFederatedHPA(ctx context.Context, key client.ObjectKey, rule autoscalingv1alpha1.CronFederatedHPARule) applied {
	if rule.TargetMinReplicas == nil && rule.TargetMaxReplicas == nil {
		return applied{err: fmt.Sprintf("spec.rules[%s]: set targetMinReplicas or targetMaxReplicas to scale FederatedHPA %s (targetReplicas is for a workload)", rule.Name, key)}
	}
	fhpa := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.client.Get(ctx, key, fhpa); err != nil {
		return applied{err: fmt.Sprintf("reading FederatedHPA %s named by spec.scaleTargetRef: %v", key, err)}
	}
	minR := ptr.Deref(rule.TargetMinReplicas, ptr.Deref(fhpa.Spec.MinReplicas, 1))
	maxR := ptr.Deref(rule.TargetMaxReplicas, fhpa.Spec.MaxReplicas)
	if minR > maxR {
		return applied{err: fmt.Sprintf("spec.rules[%s]: minReplicas %d would exceed maxReplicas %d of FederatedHPA %s: set both targetMinReplicas and targetMaxReplicas", rule.Name, minR, maxR, key)}
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"minReplicas":%d,"maxReplicas":%d}}`, minR, maxR))
	if err := r.client.Patch(ctx, fhpa, patch, client.FieldOwner(FieldManager)); err != nil {
		return applied{err: fmt.Sprintf("setting the bounds of FederatedHPA %s: %v", key, err)}
	}
	return applied{minReplicas: rule.TargetMinReplicas, maxReplicas: rule.TargetMaxReplicas}
}

func describe(a applied) string {
	switch {
	case a.replicas != nil:
		return fmt.Sprintf("replicas set to %d", *a.replicas)
	default:
		return fmt.Sprintf("bounds set (minReplicas %s, maxReplicas %s)", show(a.minReplicas), show(a.maxReplicas))
	}
}

func show(p *int32) string {
	if p == nil {
		return "unchanged"
	}
	return fmt.Sprint(*p)
}
