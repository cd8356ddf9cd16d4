package scheduling

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// Reasons of the Scheduled condition and of the scheduler's events.
const (
	ReasonSuccess          = "Success"
	ReasonUnschedulable    = workv1alpha1.ReasonUnschedulable
	ReasonSchedulerError   = "SchedulerError"
	EventScheduled         = "Scheduled"
	EventFailedScheduling  = "FailedScheduling"
	maxConditionMessageLen = 32 * 1024
)

// Results counted in the metrics.
const (
	resultScheduled     = "scheduled"
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

// Reconciler schedules the bindings of one kind. Both kinds run the same
// code: a Reconciler[*ResourceBinding] and a
// Reconciler[*ClusterResourceBinding], sharing one Fleet.
type Reconciler[T workv1alpha1.BindingObject] struct {
	client    client.Client
	apiReader client.Reader
	kind      bindingutil.Kind[T]
	fleet     *Fleet
	recorder  events.EventRecorder
	// backoff spaces the retries of unschedulable bindings; a binding that
	// schedules or needs nothing is forgotten. Cluster events retry
	// unschedulable bindings at once, whatever their back-off.
	backoff   workqueue.TypedRateLimiter[reconcile.Request]
	conflicts *conflicts.Requeue
	opts      Options
	now       func() time.Time
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler[T]) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if b.GetDeletionTimestamp() != nil || !r.ours(b) {
		return reconcile.Result{}, nil
	}
	// Whether the binding needs a cycle at all is decided unlocked: Decide
	// reads the binding and the fleet's clusters, not their room, and the
	// read that confirms a retry goes to the API server, which must not
	// hold every other cycle up (most bindings' events need nothing).
	trigger, err := r.decide(ctx, req, b)
	if err != nil || trigger == TriggerNone {
		return reconcile.Result{}, err
	}
	// One cycle at a time reads the room and takes it (see inflight.go);
	// the API writes that follow run unlocked. The fleet is read again
	// under the lock, with the cycles that ran meanwhile in flight, and
	// the decision made again on it (a target's cluster may have gone).
	r.fleet.ledger.cycle.Lock()
	unlock := sync.OnceFunc(r.fleet.ledger.cycle.Unlock)
	defer unlock()
	snap, err := r.fleet.Snapshot(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	if trigger = Decide(b, snap); trigger == TriggerNone {
		r.backoff.Forget(req)
		return reconcile.Result{}, nil
	}
	start := time.Now()
	result, err := r.schedule(ctx, b, snap, trigger, unlock)
	if result != "" {
		scheduleAttempts.WithLabelValues(result).Inc()
		e2eDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
	}
	switch {
	case err != nil:
		return reconcile.Result{}, err
	case result == resultUnschedulable:
		return reconcile.Result{RequeueAfter: r.backoff.When(req)}, nil
	}
	r.backoff.Forget(req)
	return reconcile.Result{}, nil
}

// decide says whether and why b must be scheduled, on the fleet as it is
// (without the replicas in flight, which no trigger reads). A binding that
// needs nothing is forgotten by the back-off.
func (r *Reconciler[T]) decide(ctx context.Context, req reconcile.Request, b T) (Trigger, error) {
	snap, err := r.fleet.Clusters(ctx)
	if err != nil {
		return TriggerNone, err
	}
	trigger := Decide(b, snap)
	if trigger == TriggerRetry {
		// The spec patch that woke this reconcile was written just before
		// the status patch of the same cycle, which the cache may not hold
		// yet: confirm with the API server before scheduling again.
		if err := r.apiReader.Get(ctx, req.NamespacedName, b); err != nil {
			return TriggerNone, client.IgnoreNotFound(err)
		}
		trigger = Decide(b, snap)
	}
	if trigger == TriggerNone {
		r.backoff.Forget(req)
	}
	return trigger, nil
}

// ours reports whether this scheduler places b: bindings naming another
// scheduler, and attached bindings (dependencies placed where their
// dependents run, see package dependencies), are not scheduled.
func (r *Reconciler[T]) ours(b T) bool {
	spec := b.GetBindingSpec()
	if workv1alpha1.Attached(spec) {
		return false
	}
	name := spec.SchedulerName
	return name == "" || name == r.opts.SchedulerName
}

// schedule runs one cycle and writes its outcome: at most one spec patch
// (targets and hash annotation) and one status patch, each skipped when it
// would change nothing. It returns the metric result, "" when the cycle
// was only a check that changed nothing.
//
// unlock ends the cycle's hold on the fleet's room: schedule calls it once
// the decision is assumed (or there is none), before writing.
func (r *Reconciler[T]) schedule(ctx context.Context, b T, snap *framework.Snapshot, trigger Trigger, unlock func()) (string, error) {
	log := logf.FromContext(ctx).WithValues("trigger", trigger)
	now := r.now()
	w := framework.WorkloadFromBinding(b, now)
	if trigger == TriggerReschedule {
		// WorkloadFromBinding only sees a stamp later than the last
		// scheduling; one from that same second is pending too (see
		// RescheduleServed) and must be Fresh as well.
		w.Mode = core.Fresh
	}
	if err := r.lookupPeers(ctx, b, w); err != nil {
		unlock()
		return resultError, err
	}
	res, err := r.opts.Scheduler.Schedule(ctx, snap, w)
	defer res.Release()
	spec := b.GetBindingSpec()
	if trigger == TriggerFleetChanged || trigger == TriggerOverflow {
		// Only a check, for clusters that became eligible or room that
		// returned on earlier overflow tiers: a failure here says nothing
		// new about a binding that is placed.
		if err != nil {
			unlock()
			log.V(1).Info("nothing to move", "reason", err.Error())
			return "", nil
		}
		if targets := MergeTargets(spec.Clusters, res.Targets, trigger == TriggerFleetChanged); !equality.Semantic.DeepEqual(targets, spec.Clusters) {
			return r.placed(ctx, b, res, targets, trigger, now, unlock)
		}
		unlock()
		return "", nil
	}
	if err != nil {
		unlock()
	}
	var unschedulable *scheduler.UnschedulableError
	switch {
	case errors.As(err, &unschedulable):
		log.Info("binding is unschedulable", "reason", unschedulable.Error())
		r.recorder.Eventf(b, nil, "Warning", EventFailedScheduling, "Schedule", "%s", bindingutil.Note(unschedulable.Error()))
		// Where users look first: the template they applied.
		r.recorder.Eventf(templateOf(b), b, "Warning", EventFailedScheduling, "Schedule", "%s", bindingutil.Note("Not placed: "+unschedulable.Error()))
		var decisions []workv1alpha1.ClusterDecision
		if res != nil {
			decisions = res.Decisions()
		}
		return resultUnschedulable, r.writeStatus(ctx, b, func(s *workv1alpha1.BindingStatus) {
			s.SchedulingDecisions = decisions
			setScheduled(s, b.GetGeneration(), metav1.ConditionFalse, ReasonUnschedulable, unschedulable.Error())
		})
	case err != nil:
		r.recorder.Eventf(b, nil, "Warning", EventFailedScheduling, "Schedule", "%s", bindingutil.Note("Scheduler error: "+err.Error()))
		if werr := r.writeStatus(ctx, b, func(s *workv1alpha1.BindingStatus) {
			setScheduled(s, b.GetGeneration(), metav1.ConditionFalse, ReasonSchedulerError, err.Error())
		}); werr != nil {
			log.Error(werr, "recording the scheduler error")
		}
		return resultError, err
	}
	return r.placed(ctx, b, res, MergeTargets(spec.Clusters, res.Targets, false), trigger, now, unlock)
}

// placed writes a successful placement. The placement is assumed in the
// fleet's ledger first, so the cycles after this one see its room taken
// (unlock lets them run); a failed write puts back what the API holds
// (settleFailedWrite).
func (r *Reconciler[T]) placed(ctx context.Context, b T, res *scheduler.Result, targets []workv1alpha1.TargetCluster, trigger Trigger, now time.Time, unlock func()) (string, error) {
	key := ledgerKey(r.kind.Name, b)
	before := b.DeepCopyObject().(T)
	r.fleet.ledger.assume(key, b, targets)
	unlock()
	served := ""
	if trigger == TriggerReschedule {
		served = b.GetBindingSpec().RescheduleTriggeredAt.UTC().Format(time.RFC3339)
	}
	if err := r.writeSpec(ctx, b, targets, res.Division, served); err != nil {
		r.settleFailedWrite(ctx, key, before, targets, err)
		return resultError, err
	}
	r.fleet.ledger.written(key, b.GetResourceVersion())
	decisions := res.Decisions()
	scheduledAt := now
	if t := b.GetBindingSpec().RescheduleTriggeredAt; trigger == TriggerReschedule && t.After(now) {
		// A request stamped ahead of this clock (skew between the writer
		// and the scheduler) is served now; recording its own time marks
		// it served, where an earlier lastScheduledTime would leave it
		// pending with nothing left to wake the scheduler.
		scheduledAt = t.Time
	}
	message, whole := "Binding has been scheduled successfully.", ""
	if res.NotDivided != "" {
		// The policy asked to divide the workload's components, and it
		// cannot be: say so where users look.
		whole = "; placed whole, not divided: " + res.NotDivided
		message = "Binding has been scheduled successfully, whole: its placement asks to divide its components (components.division: DivideIndependent), but " + res.NotDivided + "."
	}
	if err := r.writeStatus(ctx, b, func(s *workv1alpha1.BindingStatus) {
		s.LastScheduledTime = &metav1.Time{Time: scheduledAt}
		s.ObservedAffinityName = res.AffinityName
		s.SchedulingDecisions = decisions
		setScheduled(s, b.GetGeneration(), metav1.ConditionTrue, ReasonSuccess, message)
	}); err != nil {
		return resultError, err
	}
	described := describeTargets(targets, b.GetBindingSpec().DividedComponents)
	logf.FromContext(ctx).Info("binding scheduled", "trigger", trigger, "targets", described)
	r.recorder.Eventf(b, nil, "Normal", EventScheduled, "Schedule", "%s",
		bindingutil.Note(fmt.Sprintf("Scheduled (%s) to %s%s", trigger, described, whole)))
	return resultScheduled, nil
}

// writeSpec sets spec.clusters, spec.dividedComponents (division: nil
// for a workload placed whole) and the hash annotation in one merge patch,
// with workv1alpha1.AnnotationRescheduleObserved set to served when that is not empty
// (a reschedule served: the patch is written even if the targets stay).
// The targets and the division are written together, so that the binding
// controller never renders shares under the other's rule.
// The patch carries the resourceVersion read, so it fails rather than
// overwrite a state change the binding controller wrote meanwhile; the
// request is then retried on fresh data. b holds the patched binding
// afterwards (its new generation included).
func (r *Reconciler[T]) writeSpec(ctx context.Context, b T, targets []workv1alpha1.TargetCluster, division *workv1alpha1.DividedComponents, served string) error {
	spec := b.GetBindingSpec()
	orig := b.DeepCopyObject().(T)
	spec.Clusters, spec.DividedComponents = targets, division
	hash := SchedulingHash(spec)
	ann := b.GetAnnotations()
	if equality.Semantic.DeepEqual(orig.GetBindingSpec().Clusters, targets) && equality.Semantic.DeepEqual(orig.GetBindingSpec().DividedComponents, division) &&
		ann[workv1alpha1.AnnotationScheduledHash] == hash &&
		(served == "" || ann[workv1alpha1.AnnotationRescheduleObserved] == served) {
		return nil
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[workv1alpha1.AnnotationScheduledHash] = hash
	if served != "" {
		ann[workv1alpha1.AnnotationRescheduleObserved] = served
	}
	b.SetAnnotations(ann)
	return r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
}

// settleFailedWrite puts the ledger in step with what the API server
// holds after the write of a placement failed. An answer that refused the
// write (a 4xx: a conflict, the binding gone, invalid) stored nothing: the
// assumption goes. Any other failure (a timeout, a connection lost, a 5xx)
// may have stored it: the binding is read from the API server, and the
// assumption goes only if what it holds does not carry the placement.
// When that read fails too, the assumption stays until the binding's next
// event: the room stays taken a while longer, never counted free twice.
func (r *Reconciler[T]) settleFailedWrite(ctx context.Context, key string, before T, targets []workv1alpha1.TargetCluster, err error) {
	if storedNothing(err) {
		r.fleet.ledger.release(key, before)
		return
	}
	live := r.kind.New()
	if gerr := r.apiReader.Get(ctx, client.ObjectKeyFromObject(before), live); gerr != nil {
		if apierrors.IsNotFound(gerr) {
			r.fleet.ledger.release(key, before)
		}
		return
	}
	if equality.Semantic.DeepEqual(live.GetBindingSpec().Clusters, targets) {
		r.fleet.ledger.written(key, live.GetResourceVersion())
		return
	}
	r.fleet.ledger.release(key, live)
}

// storedNothing reports whether err is the API server's refusal of a
// write, which leaves the object as it was.
func storedNothing(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}

// writeStatus applies mutate to b's status and patches what changed, with
// the same optimistic lock as writeSpec.
//
// A conflict is retried here, on a fresh read, rather than by requeueing:
// the cycle's spec patch (targets and hash annotation) is already written,
// so a requeued request finds nothing to schedule (Decide: the hash is up
// to date and the Scheduled condition still True from the last cycle) and
// the cycle's decisions and lastScheduledTime would be lost for good. The
// binding controller, failover and work status write the binding right
// after every placement change, so such conflicts are the rule, not the
// exception. The retry stops when the fresh binding carries another hash:
// a newer cycle placed it and writes its own status.
func (r *Reconciler[T]) writeStatus(ctx context.Context, b T, mutate func(*workv1alpha1.BindingStatus)) error {
	hash := b.GetAnnotations()[workv1alpha1.AnnotationScheduledHash]
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if b.GetAnnotations()[workv1alpha1.AnnotationScheduledHash] != hash {
			return nil
		}
		orig := b.DeepCopyObject().(T)
		mutate(b.GetBindingStatus())
		if equality.Semantic.DeepEqual(orig.GetBindingStatus(), b.GetBindingStatus()) {
			return nil
		}
		err := r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
		if apierrors.IsConflict(err) {
			if gerr := r.apiReader.Get(ctx, client.ObjectKeyFromObject(b), b); gerr != nil {
				return client.IgnoreNotFound(gerr) // deleted: nothing to record
			}
		}
		return err
	})
}

func setScheduled(s *workv1alpha1.BindingStatus, generation int64, status metav1.ConditionStatus, reason, message string) {
	s.ObservedGeneration = generation
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type:               workv1alpha1.ConditionScheduled,
		Status:             status,
		Reason:             reason,
		Message:            truncate(message),
		ObservedGeneration: generation,
	})
}

// truncate keeps a message within a condition's limit.
func truncate(s string) string {
	if len(s) <= maxConditionMessageLen {
		return s
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:maxConditionMessageLen-64], len(s)-maxConditionMessageLen+64)
}

// templateOf refers to the binding's template, for events about it.
func templateOf(b workv1alpha1.BindingObject) *metav1.PartialObjectMetadata {
	res := b.GetBindingSpec().Resource
	gv, _ := schema.ParseGroupVersion(res.APIVersion)
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: gv.String(), Kind: res.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: res.Namespace, Name: res.Name, UID: types.UID(res.UID)},
	}
}
