package serviceimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/execns"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/firstseen"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/mcs"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// AnnotationManifestsHash on a Work this controller writes is the hash of
// its manifests as encoded here: a Work is rewritten only when it changes,
// whatever the API server does to the manifests' encoding.
const AnnotationManifestsHash = "multicluster.shepherd.io/manifests-hash"

// Reconciler reconciles one exported Service (the request's namespace and
// name are the Service's) across the ClusterSet.
type Reconciler struct {
	client client.Client
	now    func() metav1.Time
	// selector picks the ClusterSet's Clusters (Options.Members).
	selector labels.Selector
	// grace and maxEndpoints are Options.EndpointGracePeriod and
	// Options.MaxEndpointsPerCluster.
	grace        time.Duration
	maxEndpoints int
	// seen is when each Pull member's Ready condition was seen to take
	// its status (see readySince).
	seen firstseen.Conditions
}

// Reconcile merges the Service's exports, writes the verdicts and sends
// every member its import (or removes it).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, name := req.Namespace, req.Name
	members, recheck, err := r.members(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	list := &mcv1alpha1.ExportedServiceList{}
	if err := r.client.List(ctx, list, client.MatchingFields{index.ExportsByService: index.ServiceKey(ns, name)}); err != nil {
		return reconcile.Result{}, err
	}
	exports := make([]*mcv1alpha1.ExportedService, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			exports = append(exports, &list.Items[i])
		}
	}
	p, err := planImport(ns, name, members, exports, r.maxEndpoints)
	if err != nil {
		return reconcile.Result{}, err
	}
	serving := p.serving
	if p.manifests == nil {
		serving = 0
	}
	observe(ns, name, serving, p.conflict)
	errs := []error{r.sendImports(ctx, ns, name, members, p.manifests)}
	for _, es := range exports {
		want, ok := p.refused[es.Namespace+"/"+es.Name]
		if !ok {
			want, ok = p.conditions[es.Spec.Cluster]
		}
		if ok {
			errs = append(errs, r.writeVerdict(ctx, es, want))
		}
	}
	return reconcile.Result{RequeueAfter: recheck}, errors.Join(errs...)
}

// members lists the ClusterSet: every Cluster the selector picks that is
// not being deleted, by name. recheck, when not zero, is when a member
// still within its grace period loses it.
func (r *Reconciler) members(ctx context.Context) (out []member, recheck time.Duration, err error) {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.client.List(ctx, clusters); err != nil {
		return nil, 0, err
	}
	now := r.now().Time
	for _, c := range clusters.Items {
		if !c.DeletionTimestamp.IsZero() {
			r.seen.Forget(c.Name)
		}
		if !c.DeletionTimestamp.IsZero() || !inClusterSet(r.selector, &c) {
			continue
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		ready, left := withinGrace(cond, r.readySince(&c, cond, now), r.grace, now)
		if left > 0 && (recheck == 0 || left < recheck) {
			recheck = left
		}
		out = append(out, member{Name: c.Name, Ready: ready})
	}
	return sortedMembers(out), recheck, nil
}

// sendImports makes every member's Work of the Service carry manifests,
// and removes the Works of members that should have none.
func (r *Reconciler) sendImports(ctx context.Context, ns, name string, members []member, manifests []workv1alpha1.Manifest) error {
	existing := &workv1alpha1.WorkList{}
	if err := r.client.List(ctx, existing, client.MatchingFields{index.ImportWorksByService: index.ServiceKey(ns, name)}); err != nil {
		return err
	}
	want := map[string]bool{}
	var errs []error
	if manifests != nil {
		hash := manifestsHash(manifests)
		for _, m := range members {
			if err := execns.Ensure(ctx, r.client, m.Name); err != nil {
				errs = append(errs, err)
				continue
			}
			workNS := names.ExecutionNamespace(m.Name)
			want[workNS] = true
			errs = append(errs, r.ensureWork(ctx, workNS, importWorkName(ns, name), map[string]string{
				mcs.LabelServiceNamespace: ns, mcs.LabelServiceName: name,
			}, manifests, hash, false))
		}
	}
	for i := range existing.Items {
		w := &existing.Items[i]
		if !want[w.Namespace] && w.DeletionTimestamp.IsZero() {
			if err := r.client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("removing the import Work %s/%s: %w", w.Namespace, w.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ensureWork creates the Work or updates it when its manifests (or
// preserve, its PreserveResourcesOnDeletion) changed.
func (r *Reconciler) ensureWork(ctx context.Context, ns, name string, labels map[string]string, manifests []workv1alpha1.Manifest, hash string, preserve bool) error {
	cur := &workv1alpha1.Work{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cur)
	if apierrors.IsNotFound(err) {
		l := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd, workv1alpha1.LabelCluster: clusterOf(ns)}
		for k, v := range labels {
			l[k] = v
		}
		w := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l, Annotations: map[string]string{AnnotationManifestsHash: hash}},
			Spec:       workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: manifests}, PreserveResourcesOnDeletion: preserve},
		}
		if err := r.client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Work %s/%s: %w", ns, name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if (cur.Annotations[AnnotationManifestsHash] == hash && cur.Spec.PreserveResourcesOnDeletion == preserve) || !cur.DeletionTimestamp.IsZero() {
		return nil
	}
	next := cur.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[AnnotationManifestsHash] = hash
	next.Spec.Workload.Manifests = manifests
	next.Spec.PreserveResourcesOnDeletion = preserve
	// A patch without a resourceVersion: this controller is the only
	// writer of an import Work's spec, and the execution controller writes
	// its status meanwhile, which an update from the cache would conflict
	// with; the Work's updates wake no reconcile here, so a conflict would
	// leave the import behind until the Service's exports change again.
	if err := r.client.Patch(ctx, next, client.MergeFrom(cur)); err != nil {
		return fmt.Errorf("updating Work %s/%s: %w", ns, name, err)
	}
	return nil
}

// writeVerdict sets an export's Ready and Conflict conditions when they
// changed.
func (r *Reconciler) writeVerdict(ctx context.Context, es *mcv1alpha1.ExportedService, want []metav1.Condition) error {
	next := es.DeepCopy()
	changed := next.Status.ObservedGeneration != es.Generation
	next.Status.ObservedGeneration = es.Generation
	if mcs.SetConditions(&next.Status.Conditions, want, []string{mcv1alpha1.ConditionReady, mcv1alpha1.ConditionConflict}, r.now()) {
		changed = true
	}
	if !changed {
		return nil
	}
	if err := r.client.Status().Update(ctx, next); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the verdict on %s/%s: %w", es.Namespace, es.Name, err)
	}
	return nil
}

func manifestsHash(ms []workv1alpha1.Manifest) string {
	h := sha256.New()
	for _, m := range ms {
		h.Write(m.Raw)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// inClusterSet reports whether the selector (nil: every Cluster) picks c.
func inClusterSet(selector labels.Selector, c *clusterv1alpha1.Cluster) bool {
	return selector == nil || selector.Matches(labels.Set(c.Labels))
}

func clusterOf(ns string) string {
	c, _ := names.ClusterOfExecutionNamespace(ns)
	return c
}
