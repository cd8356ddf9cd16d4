package binding

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/execns"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
)

// Event reasons on bindings.
const (
	ReasonSyncWorkSucceed  = "SyncWorkSucceed"
	ReasonSyncWorkFailed   = "SyncWorkFailed"
	ReasonWorkNameConflict = "WorkNameConflict"
)

// Reconciler turns the bindings of one kind into Works, moves their
// targets through Scheduled, Bound and Unscheduled, and reports whether
// every Work was applied. Both kinds run the same code.
type Reconciler[T workv1alpha1.BindingObject] struct {
	// in knows the kinds: replica shares, what to prune, pod spec paths
	// for overrides (d.Interpreter).
	in     interpreter.Interpreter
	client client.Client
	// reader reads rollout revisions from the API server: they are read
	// rarely, and a cache would hold every ControllerRevision of the hub.
	reader    client.Reader
	revisions *revisionCache
	now       func() time.Time
	cache     cache.Cache
	kind      bindingutil.Kind[T]
	recorder  events.EventRecorder
	conflicts *conflicts.Requeue
	// failedRenders remembers, per Work, the render key of a rendering
	// that failed (reported in events), so that the same inputs are not
	// rendered again at every reconcile.
	failedRenders *renderFailures
	opts          Options
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler[T]) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		// Gone without its finalizer (deleted before it was set, or
		// removed by hand): its Works must not outlive it.
		ref := names.BindingRef{Kind: r.kind.Name, Namespace: req.Namespace, Name: req.Name}
		works, err := r.works(ctx, ref)
		if err == nil {
			_, err = r.deleteWorks(ctx, works, nil)
		}
		return reconcile.Result{}, err
	}
	ref := r.kind.Ref(b)
	works, err := r.works(ctx, ref)
	if err != nil {
		return reconcile.Result{}, err
	}
	if b.GetDeletionTimestamp() != nil {
		return reconcile.Result{}, r.finalize(ctx, b, works)
	}
	if err := r.ensureFinalizer(ctx, b); err != nil {
		return reconcile.Result{}, err
	}
	applied, ro, err := r.syncWorks(ctx, b, ref, works)
	if err != nil {
		r.recorder.Eventf(b, nil, "Warning", ReasonSyncWorkFailed, "SyncWork", "%s", bindingutil.Note(err.Error()))
		return reconcile.Result{}, err
	}
	keep := map[string]bool{}
	for _, t := range bindingutil.WorkTargets(b.GetBindingSpec()) {
		keep[t.Name] = true
	}
	// A cluster evicted by failover keeps its Work (the old copy) while a
	// graceful eviction task for it exists; the failover controller drops
	// the task when the purge mode lets the copy go.
	for _, task := range b.GetBindingSpec().GracefulEvictionTasks {
		keep[task.FromCluster] = true
	}
	// A suspended cluster keeps its Work when it leaves the placement:
	// suspension holds deletions in members as well as applies. The Work
	// goes when the suspension is lifted.
	for cluster := range works {
		if b.GetBindingSpec().Suspension.Suspends(cluster) {
			keep[cluster] = true
		}
	}
	deleted, err := r.deleteWorks(ctx, works, keep)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(applied)+len(deleted) > 0 {
		r.recorder.Eventf(b, nil, "Normal", ReasonSyncWorkSucceed, "SyncWork", "%s", bindingutil.Note(describeSync(applied, deleted)))
	}
	if err := r.updateTargetsAndStatus(ctx, b, works, ro); err != nil {
		return reconcile.Result{}, err
	}
	if ro != nil {
		return reconcile.Result{RequeueAfter: ro.requeue}, nil
	}
	return reconcile.Result{}, nil
}

// works returns the binding's Works by cluster, from the cache index.
func (r *Reconciler[T]) works(ctx context.Context, ref names.BindingRef) (map[string]*workv1alpha1.Work, error) {
	list := &workv1alpha1.WorkList{}
	if err := r.client.List(ctx, list, client.MatchingFields{index.WorksByBinding: names.BindingRef{Kind: r.kind.Name, Namespace: ref.Namespace, Name: ref.Name}.String()}); err != nil {
		return nil, err
	}
	out := make(map[string]*workv1alpha1.Work, len(list.Items))
	for i := range list.Items {
		w := &list.Items[i]
		if cluster, ok := names.ClusterOfExecutionNamespace(w.Namespace); ok {
			out[cluster] = w
		}
	}
	return out, nil
}

// finalize deletes the Works of a binding being deleted and lets the
// binding go once they are gone. The execution controller's finalizer on
// each Work holds it until the member's objects are deleted; the Works'
// deletion events bring the binding back here.
func (r *Reconciler[T]) finalize(ctx context.Context, b T, works map[string]*workv1alpha1.Work) error {
	if !controllerutil.ContainsFinalizer(b, workv1alpha1.FinalizerBinding) {
		return nil
	}
	if _, err := r.deleteWorks(ctx, works, nil); err != nil || len(works) > 0 {
		return err
	}
	if ro := b.GetBindingStatus().Rollout; ro != nil {
		if err := r.deleteRevisions(ctx, r.kind.Ref(b), ro.History); err != nil {
			return err
		}
	}
	orig := b.DeepCopyObject().(T)
	controllerutil.RemoveFinalizer(b, workv1alpha1.FinalizerBinding)
	return client.IgnoreNotFound(r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)))
}

// ensureFinalizer adds FinalizerBinding before any Work exists, so that a
// deleted binding never leaves Works behind.
func (r *Reconciler[T]) ensureFinalizer(ctx context.Context, b T) error {
	if controllerutil.ContainsFinalizer(b, workv1alpha1.FinalizerBinding) {
		return nil
	}
	orig := b.DeepCopyObject().(T)
	controllerutil.AddFinalizer(b, workv1alpha1.FinalizerBinding)
	return r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
}

// template reads the binding's template from the shared cache (the
// detector's informer of the kind); nil when it is gone, being deleted,
// one Shepherd never propagates (a service account token Secret), or
// not the object the binding names by UID (recreated under the same name: the
// detector updates the binding, which brings it back here).
func (r *Reconciler[T]) template(ctx context.Context, b T) (*unstructured.Unstructured, error) {
	res := b.GetBindingSpec().Resource
	gv, err := schema.ParseGroupVersion(res.APIVersion)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(res.Kind))
	if err := r.cache.Get(ctx, client.ObjectKey{Namespace: res.Namespace, Name: res.Name}, u); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if u.GetDeletionTimestamp() != nil || string(u.GetUID()) != res.UID || resourceselector.ExcludedObject(u) {
		return nil, nil
	}
	return u, nil
}

// syncWorks applies the Work of every active target (and every cluster a
// dependent binding requires this one in, see bindingutil.WorkTargets) whose Work is missing
// or out of date, records the stored Works in works, and returns the
// clusters written. A Work being deleted (its cluster left and came back)
// is re-created once it is gone. A binding with a Progressive or Staged
// rollout goes through syncRollout, which also returns the rollout's
// status.
func (r *Reconciler[T]) syncWorks(ctx context.Context, b T, ref names.BindingRef, works map[string]*workv1alpha1.Work) ([]string, *rolloutOutcome, error) {
	if err := checkResource(r.kind.Name, b.GetNamespace(), b.GetName(), b.GetBindingSpec().Resource); err != nil {
		// Not retried: only a change of the binding can make it right.
		r.recorder.Eventf(b, nil, "Warning", ReasonResourceRefused, "SyncWork", "%s", bindingutil.Note("No Work is written: "+err.Error()))
		return nil, nil, nil
	}
	tmpl, err := r.template(ctx, b)
	if err != nil || tmpl == nil {
		return nil, nil, err
	}
	ops, err := r.overridePolicies(ctx, tmpl.GetNamespace())
	if err != nil {
		return nil, nil, err
	}
	if b.GetBindingSpec().Rollout.Gated() {
		return r.syncRollout(ctx, b, ref, works, tmpl, ops)
	}
	manifests, err := memberManifests(r.in, tmpl, b.GetBindingSpec())
	if err != nil {
		return nil, nil, err
	}
	var applied []string
	for _, t := range bindingutil.WorkTargets(b.GetBindingSpec()) {
		if leaving, err := r.clusterLeaving(ctx, t.Name); err != nil || leaving {
			// Its Works are being removed with it (the scheduler moves
			// the target away); writing one would undo that.
			if err != nil {
				return applied, nil, err
			}
			continue
		}
		wrote, err := r.writeWork(ctx, b, ref, tmpl, t.Name, manifests[t.Name], ops, tmpl.GetGeneration(), "", works)
		if err != nil {
			return applied, nil, err
		}
		if wrote {
			applied = append(applied, t.Name)
		}
	}
	return applied, nil, nil
}

// writeWork renders base for cluster with the override policies ps and
// applies the Work holding it unless the stored one already does
// (revision, when not empty, is written as AnnotationRevision). It reports
// whether it wrote, and records the stored Work in works. A manifest the
// overrides cannot render is reported in events and leaves the Work as it
// was.
func (r *Reconciler[T]) writeWork(ctx context.Context, b T, ref names.BindingRef, tmpl *unstructured.Unstructured, cluster string, base *unstructured.Unstructured, ps *overridePolicies, templateGeneration int64, revision string, works map[string]*workv1alpha1.Work) (bool, error) {
	existing := works[cluster]
	if existing != nil && existing.DeletionTimestamp != nil {
		return false, nil // re-created once it is gone
	}
	podSecurity, err := r.podSecurity(ctx, ref.Namespace)
	if err != nil {
		return false, err
	}
	unrendered := desiredWork(ref, cluster, base, templateGeneration, b.GetBindingSpec())
	inputs := unrendered.GetAnnotations()
	inputs[workv1alpha1.AnnotationPodSecurity] = podSecurity
	inputs[workv1alpha1.AnnotationRevision] = revision
	inputs["finalizer"] = strconv.FormatBool(r.opts.WorkFinalizer)
	unrendered.SetAnnotations(inputs)
	key, err := r.renderKey(ctx, unrendered, cluster, ps)
	if err != nil {
		return false, err
	}
	if existing != nil && existing.Annotations[workv1alpha1.AnnotationRenderKey] == key {
		return false, nil // rendered from the same inputs: nothing to do
	}
	workKey := ref.String() + "@" + cluster
	if r.failedRenders.Failed(workKey, key) {
		return false, nil // failed from the same inputs, and said so then
	}
	manifest, appliedOverrides, err := r.render(ctx, base, cluster, ps)
	reason := ReasonOverrideFailed
	if err == nil {
		if err = checkIdentity(manifest, b.GetBindingSpec().Resource); err != nil {
			reason = ReasonIdentityChanged
		} else if err = checkGrants(manifest, b.GetBindingSpec()); err != nil {
			reason = ReasonEscalationForbidden
		}
	}
	if err != nil {
		note := bindingutil.Note(fmt.Sprintf("Not updating the Work for %s: %v", cluster, err))
		r.recorder.Eventf(b, nil, "Warning", reason, "SyncWork", "%s", note)
		r.recorder.Eventf(tmpl, b, "Warning", reason, "SyncWork", "%s", note)
		r.failedRenders.Set(workKey, key)
		return false, nil
	}
	r.failedRenders.Set(workKey, "")
	desired := desiredWork(ref, cluster, manifest, templateGeneration, b.GetBindingSpec())
	ann := desired.GetAnnotations()
	ann[workv1alpha1.AnnotationRenderKey] = key
	if podSecurity != "" {
		ann[workv1alpha1.AnnotationPodSecurity] = podSecurity
	}
	if appliedOverrides != "" {
		ann[workv1alpha1.AnnotationAppliedOverrides] = appliedOverrides
	}
	if revision != "" {
		ann[workv1alpha1.AnnotationRevision] = revision
	}
	desired.SetAnnotations(ann)
	if r.opts.WorkFinalizer {
		// In every apply, not only the first: server-side apply
		// removes a field its manager applied before and leaves out
		// now. Works being deleted are never applied (below), so the
		// execution controller removes it undisturbed.
		desired.SetFinalizers([]string{workv1alpha1.FinalizerWork})
	}
	if existing != nil && upToDate(existing, desired) {
		return false, nil
	}
	if existing == nil {
		if owner, taken := r.takenBy(ctx, desired, ref); taken {
			r.recorder.Eventf(b, nil, "Warning", ReasonWorkNameConflict, "SyncWork", "%s", bindingutil.Note(fmt.Sprintf(
				"Work %s/%s belongs to %s; not propagating to %s", desired.GetNamespace(), desired.GetName(), owner, cluster)))
			return false, nil
		}
		if err := r.ensureNamespace(ctx, cluster); err != nil {
			return false, err
		}
	}
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(workv1alpha1.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying Work %s/%s: %w", desired.GetNamespace(), desired.GetName(), err)
	}
	workOps.WithLabelValues(opApplied).Inc()
	// desired now holds the Work the server stored: its generation
	// tells the FullyApplied condition of this same reconcile that
	// the new spec awaits the execution controller.
	w := &workv1alpha1.Work{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(desired.Object, w); err != nil {
		return true, err
	}
	works[cluster] = w
	return true, nil
}

// clusterLeaving reports whether the target's Cluster is being deleted.
func (r *Reconciler[T]) clusterLeaving(ctx context.Context, name string) (bool, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return !c.DeletionTimestamp.IsZero(), nil
}

// takenBy reports whether a Work of another binding already has the name
// and namespace of desired (names.WorkName keeps bindings apart unless two
// kinds of the same name differ in scope), and names its binding.
// Applying would take it over, so the caller leaves it alone.
func (r *Reconciler[T]) takenBy(ctx context.Context, desired *unstructured.Unstructured, ref names.BindingRef) (string, bool) {
	w := &workv1alpha1.Work{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), w); err != nil {
		return "", false
	}
	owner := w.Annotations[workv1alpha1.AnnotationBinding]
	return owner, owner != ref.String()
}

// ensureNamespace creates the cluster's execution namespace if missing.
func (r *Reconciler[T]) ensureNamespace(ctx context.Context, cluster string) error {
	return execns.Ensure(ctx, r.client, cluster)
}

// deleteWorks deletes the Works of clusters not in keep (all when keep is
// nil) that are not being deleted yet, and returns their clusters.
func (r *Reconciler[T]) deleteWorks(ctx context.Context, works map[string]*workv1alpha1.Work, keep map[string]bool) ([]string, error) {
	var deleted []string
	for _, cluster := range sortedKeys(works) {
		w := works[cluster]
		if keep[cluster] || w.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
			return deleted, err
		}
		workOps.WithLabelValues(opDeleted).Inc()
		deleted = append(deleted, cluster)
	}
	return deleted, nil
}

// updateTargetsAndStatus writes the target states and the FullyApplied
// condition the Works call for, each only when it changes, with the
// optimistic lock the scheduler also uses on spec.clusters.
func (r *Reconciler[T]) updateTargetsAndStatus(ctx context.Context, b T, works map[string]*workv1alpha1.Work, ro *rolloutOutcome) error {
	states := make(map[string]workState, len(works))
	for cluster, w := range works {
		states[cluster] = observe(w)
	}
	targets, changed := nextTargets(b.GetBindingSpec().Clusters, states)
	if changed {
		orig := b.DeepCopyObject().(T)
		b.GetBindingSpec().Clusters = targets
		if err := r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
			return err
		}
		logf.FromContext(ctx).V(1).Info("targets updated", "targets", targets)
	}
	orig := b.DeepCopyObject().(T)
	conds := &b.GetBindingStatus().Conditions
	c, ok := fullyApplied(targets, states)
	switch {
	case ok && c.Reason == ReasonPending && meta.FindStatusCondition(*conds, workv1alpha1.ConditionFullyApplied) == nil && !anyReported(states):
		// A first placement whose Works no member has answered for yet:
		// the condition appears with the first answer (usually Applied,
		// moments later) rather than as Pending first, which would cost
		// every new workload one more binding write.
		changed = false
	case ok:
		changed = meta.SetStatusCondition(conds, c)
	default:
		changed = meta.RemoveStatusCondition(conds, workv1alpha1.ConditionFullyApplied)
	}
	if (ro != nil || !b.GetBindingSpec().Rollout.Gated()) && setRollout(b.GetBindingStatus(), ro) {
		changed = true
	}
	if !changed {
		return nil
	}
	return r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
}

// anyReported reports whether the execution controller answered for any
// Work: applied or failed.
func anyReported(states map[string]workState) bool {
	for _, s := range states {
		if s.applied || s.failed {
			return true
		}
	}
	return false
}

func describeSync(applied, deleted []string) string {
	var parts []string
	if len(applied) > 0 {
		parts = append(parts, "applied Works for "+strings.Join(applied, ", "))
	}
	if len(deleted) > 0 {
		parts = append(parts, "deleted Works of "+strings.Join(deleted, ", "))
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
