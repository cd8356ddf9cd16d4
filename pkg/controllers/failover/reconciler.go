package failover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// ControllerName prefixes the controllers' names in logs, metrics and events.
const ControllerName = "failover"

// The EvictionPending condition of a binding and its reasons.
const (
	ConditionEvictionPending   = "EvictionPending"
	ReasonAwaitingConfirmation = "AwaitingConfirmation"
	ReasonGracePeriod          = "GracePeriod"
)

// Event reasons on bindings.
const (
	EventEvicted           = "Evicted"
	EventStateNotPreserved = "StateNotPreserved"
	EventEvictionCompleted = "EvictionCompleted"
	EventHistoryPruned     = "HistoryPruned"
)

// Reconciler runs failover for the bindings of one kind.
type Reconciler[T workv1alpha1.BindingObject] struct {
	client    client.Client
	kind      bindingutil.Kind[T]
	recorder  events.EventRecorder
	conflicts *conflicts.Requeue
	limiter   *rate.Limiter
	in        apiDefiners
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
	orig := b.DeepCopyObject().(T)
	spec, status := b.GetBindingSpec(), b.GetBindingStatus()
	d := &deadlines{}

	finished := finishTasks(spec, status, now, d)
	pruned := pruneHistory(spec, now, d)
	var evs, clusterEvs []eviction
	if !workv1alpha1.Unclaimed(status) {
		// An unclaimed binding keeps its placement: nothing would place
		// an evicted copy elsewhere.
		evs = applicationEvictions(spec, status, now, d)
		if taintEvictable(r.in, spec.Resource) {
			var err error
			if clusterEvs, err = r.clusterEvictions(ctx, spec, now, d); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	var throttled time.Duration
	if clusterEvs = withoutDuplicates(clusterEvs, evs); len(clusterEvs) > 0 {
		// One token per binding, however many of its clusters go.
		if res := r.limiter.ReserveN(now, 1); res.DelayFrom(now) > 0 {
			throttled = res.DelayFrom(now)
			res.CancelAt(now)
			clusterEvs = nil
		}
	}
	evs = append(evs, clusterEvs...)
	stateErrs := evict(spec, b.GetBindingStatus(), evs, metav1.NewTime(now))

	if !equality.Semantic.DeepEqual(orig.GetBindingSpec(), spec) {
		if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
			return reconcile.Result{}, err
		}
		r.report(b, evs, finished, pruned)
		for _, err := range stateErrs {
			r.recorder.Eventf(b, nil, corev1.EventTypeWarning, EventStateNotPreserved, "Evict", "%s", bindingutil.Note(err.Error()))
		}
		for _, ev := range evs {
			log.Info("evicted cluster", "cluster", ev.cluster, "reason", ev.reason, "purgeMode", ev.purge, "message", ev.message)
		}
	}
	if err := r.updateCondition(ctx, b); err != nil {
		return reconcile.Result{}, err
	}
	next := d.after(r.opts.Now())
	if throttled > 0 && (next == 0 || throttled < next) {
		next = throttled
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// clusterEvictions reads the active targets' Clusters from the cache and
// returns the evictions their NoExecute taints call for.
func (r *Reconciler[T]) clusterEvictions(ctx context.Context, spec *workv1alpha1.BindingSpec, now time.Time, d *deadlines) ([]eviction, error) {
	clusters := map[string]*clusterv1alpha1.Cluster{}
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		c := &clusterv1alpha1.Cluster{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: t.Name}, c); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			continue // gone: the scheduler moves the workload (ClusterGone)
		}
		clusters[t.Name] = c
	}
	return clusterEvictions(spec, clusters, now, d), nil
}

// withoutDuplicates drops the cluster evictions of clusters that
// application failover evicts in the same pass.
func withoutDuplicates(clusterEvs, appEvs []eviction) []eviction {
	return slices.DeleteFunc(clusterEvs, func(c eviction) bool {
		return slices.ContainsFunc(appEvs, func(a eviction) bool { return a.cluster == c.cluster })
	})
}

// report emits the events and metrics of a written change.
func (r *Reconciler[T]) report(b T, evs []eviction, finished []finishedTask, pruned []string) {
	for _, ev := range evs {
		evictions.WithLabelValues(ev.reason).Inc()
		keep := "the old copy is removed now"
		if !ev.purge.Direct() {
			keep = fmt.Sprintf("the old copy is kept (purge mode %s)", ev.purge)
		}
		r.recorder.Eventf(b, nil, corev1.EventTypeWarning, EventEvicted, "Evict", "%s",
			bindingutil.Note(fmt.Sprintf("Evicted cluster %s (%s): %s; %s", ev.cluster, ev.reason, ev.message, keep)))
	}
	for _, f := range finished {
		tasksFinished.Inc()
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, EventEvictionCompleted, "Purge", "%s",
			bindingutil.Note(fmt.Sprintf("Removing the old copy on %s: %s", f.cluster, f.why)))
	}
	if len(pruned) > 0 {
		r.recorder.Eventf(b, nil, corev1.EventTypeNormal, EventHistoryPruned, "Prune", "%s",
			bindingutil.Note("Eviction history of "+strings.Join(pruned, ", ")+" expired; the clusters may be scheduled again"))
	}
}

// updateCondition writes the EvictionPending condition when it changes.
func (r *Reconciler[T]) updateCondition(ctx context.Context, b T) error {
	orig := b.DeepCopyObject().(T)
	conds := &b.GetBindingStatus().Conditions
	var changed bool
	if c, ok := pendingCondition(b.GetBindingSpec().GracefulEvictionTasks, b.GetGeneration()); ok {
		changed = meta.SetStatusCondition(conds, c)
	} else {
		changed = meta.RemoveStatusCondition(conds, ConditionEvictionPending)
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
		in:        d.Interpreter,
		opts:      opts,
	}
}
