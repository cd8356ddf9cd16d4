package descheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// ControllerName prefixes the controllers' names in logs, metrics and events.
const ControllerName = "descheduler"

// Event reasons of a move, on the binding and its template: replicas
// taken back, or a gang moved whole.
const (
	EventReplicasDescheduled = "ReplicasDescheduled"
	EventGangDescheduled     = "GangDescheduled"
)

// Reconciler moves unschedulable replicas of the bindings of one kind.
type Reconciler[T workv1alpha1.BindingObject] struct {
	client    client.Client
	kind      bindingutil.Kind[T]
	recorder  events.EventRecorder
	conflicts *conflicts.Requeue
	limiter   *rate.Limiter
	opts      Options
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler[T]) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	b := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if b.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, nil
	}
	now := r.opts.Now()
	d := decide(b.GetBindingSpec(), b.GetBindingStatus(), b.GetAnnotations(), r.opts.Threshold, now)
	if workv1alpha1.Unclaimed(b.GetBindingStatus()) {
		d.moves = nil // it keeps its placement until a policy claims it
	}
	var throttled time.Duration
	if len(d.moves) > 0 {
		// One token per binding, however many of its clusters give back.
		if res := r.limiter.ReserveN(now, 1); res.DelayFrom(now) > 0 {
			throttled = res.DelayFrom(now)
			res.CancelAt(now)
			d.moves = nil
		}
	}
	if len(d.moves) > 0 {
		orig := b.DeepCopyObject().(T)
		b.SetAnnotations(apply(b.GetBindingSpec(), b.GetAnnotations(), d, now))
		if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
			return reconcile.Result{}, err
		}
		r.report(ctx, b, d)
		for _, m := range d.moves {
			switch {
			case m.whole:
				log.Info("moved gang whole", "cluster", m.cluster, "unschedulable", m.count, "since", m.since)
			case len(m.components) > 0:
				log.Info("moved unschedulable replicas of divided components", "cluster", m.cluster, "moved", describeComponents(m), "since", m.since)
			default:
				log.Info("moved unschedulable replicas", "cluster", m.cluster, "replicas", m.count, "keeps", m.keep, "since", m.since)
			}
		}
	}
	if throttled == 0 {
		if err := r.updateCondition(ctx, b, d); err != nil {
			return reconcile.Result{}, err
		}
	}
	next := time.Duration(0)
	if !d.next.IsZero() {
		next = max(d.next.Sub(r.opts.Now()), time.Millisecond)
	}
	if throttled > 0 && (next == 0 || throttled < next) {
		next = throttled
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// report emits the events and the metric of a written move, on the binding
// and on its template.
func (r *Reconciler[T]) report(ctx context.Context, b T, d decision) {
	ref := b.GetBindingSpec().Resource
	var tmpl *unstructured.Unstructured
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err == nil {
			tmpl = u
		}
	}
	for _, m := range d.moves {
		reason, note := EventReplicasDescheduled, ""
		switch {
		case m.whole:
			gangsMoved.Inc()
			reason, note = EventGangDescheduled, gangNote(b.GetBindingSpec(), m, d.why)
		case len(m.components) > 0:
			replicasMoved.Add(float64(m.count))
			note = fmt.Sprintf("Moved %s: unschedulable there since %s (%s); the scheduler places them again by room, the head stays",
				describeComponents(m), m.since.UTC().Format(time.RFC3339), d.why)
		default:
			replicasMoved.Add(float64(m.count))
			note = fmt.Sprintf("Moved %d replicas from cluster %s: unschedulable there since %s (%s); it keeps %d, the scheduler places the others",
				m.count, m.cluster, m.since.UTC().Format(time.RFC3339), d.why, m.keep)
		}
		note = bindingutil.Note(note)
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, reason, "Deschedule", "%s", note)
		if tmpl != nil {
			r.recorder.Eventf(tmpl, nil, corev1.EventTypeNormal, reason, "Deschedule", "%s", note)
		}
	}
}

// updateCondition writes the ReplicasDescheduled condition when it
// changes. A report (False) is removed once no replica is unschedulable;
// a move (True) stays as the record of the last move.
func (r *Reconciler[T]) updateCondition(ctx context.Context, b T, d decision) error {
	orig := b.DeepCopyObject().(T)
	conds := &b.GetBindingStatus().Conditions
	var changed bool
	if c, ok := condition(d, b.GetGeneration()); ok {
		changed = meta.SetStatusCondition(conds, c)
	} else if cur := meta.FindStatusCondition(*conds, ConditionReplicasDescheduled); cur != nil && cur.Status == metav1.ConditionFalse && d.next.IsZero() {
		changed = meta.RemoveStatusCondition(conds, ConditionReplicasDescheduled)
	}
	if !changed {
		return nil
	}
	return r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
}

// newReconciler builds the reconciler of one kind; limiter is shared by both kinds.
func newReconciler[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T], opts Options, limiter *rate.Limiter) *Reconciler[T] {
	return &Reconciler[T]{
		client:    d.Client(),
		kind:      kind,
		recorder:  d.Recorder(ControllerName),
		conflicts: conflicts.NewRequeue(),
		limiter:   limiter,
		opts:      opts,
	}
}
