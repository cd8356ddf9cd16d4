package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/rollout"
)

// Event reasons of a binding's rollout.
const (
	ReasonRolloutStarted    = "RolloutStarted"
	ReasonRolloutProgress   = "RolloutProgressing"
	ReasonRolloutWaiting    = "RolloutWaiting"
	ReasonRolloutPaused     = "RolloutPaused"
	ReasonRolloutFailed     = "RolloutFailed"
	ReasonRolloutRolledBack = "RolloutRolledBack"
	ReasonRolloutComplete   = "RolloutComplete"
	ReasonRevisionMissing   = "RevisionMissing"
)

// rolloutOutcome is what a gated sync leaves for the status write.
type rolloutOutcome struct {
	status     workv1alpha1.RolloutStatus
	conditions []metav1.Condition
	requeue    time.Duration
}

// syncRollout is syncWorks for a binding with a Progressive or Staged
// rollout: the template and override policies make the target revision
// (kept as a ControllerRevision), rollout.Decide says which clusters may
// be sent which revision now, and every cluster's Work is rendered from
// the revision it holds or is sent, so that a cluster behind the rollout
// keeps exactly what it ran.
func (r *Reconciler[T]) syncRollout(ctx context.Context, b T, ref names.BindingRef, works map[string]*workv1alpha1.Work, tmpl *unstructured.Unstructured, ps *overridePolicies) ([]string, *rolloutOutcome, error) {
	spec := b.GetBindingSpec()
	current := newRevision(r.in, tmpl, ps)
	target, err := current.hash()
	if err != nil {
		return nil, nil, err
	}
	var prior *workv1alpha1.RolloutStatus
	var history []workv1alpha1.RevisionRecord
	if p := b.GetBindingStatus().Rollout; p != nil {
		prior, history = p, p.History
	}
	if history, err = r.storeRevision(ctx, b, ref, target, current, history); err != nil {
		return nil, nil, err
	}
	var targets []workv1alpha1.TargetCluster
	for _, t := range bindingutil.WorkTargets(spec) {
		leaving, err := r.clusterLeaving(ctx, t.Name)
		if err != nil {
			return nil, nil, err
		}
		if !leaving {
			targets = append(targets, t)
		}
	}
	clusters, err := r.rolloutClusters(ctx, spec.Rollout, targets, works)
	if err != nil {
		return nil, nil, err
	}
	// Decide records times in whole seconds, as the API stores them, so
	// that a decision read back after a restart is the one written.
	d := rollout.Decide(rollout.Input{Strategy: spec.Rollout, Target: target, Prior: prior, Control: spec.RolloutControl, Clusters: clusters, Now: r.now()})
	revisionOf := map[string]string{}
	for _, c := range clusters {
		revisionOf[c.Name] = c.Revision
	}
	if takesOffTarget(d.Send, revisionOf, target) {
		// A rollback (or undo) takes the target off clusters: once their
		// Works hold the old revision, nothing but the status says the
		// target failed there. The decision is recorded first, so that a
		// restart or a lost race for the binding between the two writes
		// cannot send the failed revision out again.
		st := d.Status
		st.History = history
		if err := r.recordRollout(ctx, b, &rolloutOutcome{status: st, conditions: d.Conditions}); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range d.Send {
		revisionOf[s.Cluster] = s.Revision
	}
	rendered := map[string]map[string]*unstructured.Unstructured{}
	var applied []string
	for _, t := range targets {
		rev := revisionOf[t.Name]
		if rev == "" {
			// Not sent anything yet, or a Work from before the rollout
			// strategy: left as it is until the rollout reaches it.
			continue
		}
		v := current
		if rev != target {
			if v, err = r.loadRevision(ctx, ref, rev); err != nil {
				return applied, nil, err
			}
			if v == nil {
				r.recorder.Eventf(b, nil, "Warning", ReasonRevisionMissing, "SyncWork", "%s", bindingutil.Note(fmt.Sprintf(
					"Revision %s of %s is not kept any more (ControllerRevision %s deleted?): its Work is left as it is", rev, t.Name, names.RevisionName(ref, rev))))
				continue
			}
		}
		manifests, ok := rendered[rev]
		if !ok {
			if manifests, err = memberManifests(r.in, v.manifest(), spec); err != nil {
				return applied, nil, err
			}
			rendered[rev] = manifests
		}
		wrote, err := r.writeWork(ctx, b, ref, tmpl, t.Name, manifests[t.Name], v.policies(), v.TemplateGeneration, rev, works)
		if err != nil {
			return applied, nil, err
		}
		if wrote {
			applied = append(applied, t.Name)
		}
	}
	st := d.Status
	inUse := map[string]bool{target: true, st.LastGoodRevision: true}
	for _, c := range st.Clusters {
		inUse[c.Revision] = true
	}
	limit := int(derefOr(spec.Rollout.RevisionHistoryLimit, policyv1alpha1.DefaultRevisionHistoryLimit))
	if st.History, err = r.pruneRevisions(ctx, ref, history, limit, inUse); err != nil {
		return applied, nil, err
	}
	r.rolloutEvents(b, prior, &st)
	logf.FromContext(ctx).V(1).Info("rollout", "revision", target, "phase", st.Phase, "send", d.Send)
	return applied, &rolloutOutcome{status: st, conditions: d.Conditions, requeue: d.RequeueAfter}, nil
}

// takesOffTarget reports whether sends move a cluster whose Work holds
// the target (revisionOf) to another revision.
func takesOffTarget(sends []rollout.Send, revisionOf map[string]string, target string) bool {
	for _, s := range sends {
		if s.Revision != target && revisionOf[s.Cluster] == target {
			return true
		}
	}
	return false
}

// recordRollout writes the rollout's status and conditions at once, with
// the optimistic lock of every binding status write.
func (r *Reconciler[T]) recordRollout(ctx context.Context, b T, ro *rolloutOutcome) error {
	orig := b.DeepCopyObject().(T)
	if !setRollout(b.GetBindingStatus(), ro) {
		return nil
	}
	return r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
}

// rolloutClusters reads what rollout.Decide needs of each target: the
// revision its Work holds, whether the copy is ready, and which stages
// select the cluster.
func (r *Reconciler[T]) rolloutClusters(ctx context.Context, s *policyv1alpha1.RolloutStrategy, targets []workv1alpha1.TargetCluster, works map[string]*workv1alpha1.Work) ([]rollout.Cluster, error) {
	selectors, err := rollout.Selectors(s)
	if err != nil {
		return nil, err
	}
	out := make([]rollout.Cluster, 0, len(targets))
	for _, t := range targets {
		c := rollout.Cluster{Name: t.Name}
		if w := works[t.Name]; w != nil && w.DeletionTimestamp == nil {
			c.HasWork, c.Revision, c.Ready = true, w.Annotations[workv1alpha1.AnnotationRevision], rolloutReady(w)
		}
		if s.Type == policyv1alpha1.RolloutStaged {
			cl := &clusterv1alpha1.Cluster{}
			if err := r.client.Get(ctx, client.ObjectKey{Name: t.Name}, cl); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			c.Stages = selectors.Of(cl.Labels)
		}
		out = append(out, c)
	}
	return out, nil
}

// rolloutReady reports whether a Work's copy counts as healthy for a
// rollout: the Work's current spec was applied, and every manifest's copy
// is Healthy by the interpreter (built-in rules, HealthInterpreters,
// customizations) and rolled out: its status observed the member
// object's generation. A kind without a health rule is Unknown, never
// ready: give it a HealthInterpreter to roll it out progressively.
func rolloutReady(w *workv1alpha1.Work) bool {
	if w == nil || w.DeletionTimestamp != nil || !observe(w).applied || len(w.Status.ManifestStatuses) == 0 {
		return false
	}
	for _, ms := range w.Status.ManifestStatuses {
		if ms.Health != policyv1alpha1.ResourceHealthy {
			return false
		}
		if ms.Status != nil && ms.Generation > 0 {
			var st struct {
				ObservedGeneration *int64 `json:"observedGeneration"`
			}
			if json.Unmarshal(ms.Status.Raw, &st) == nil && st.ObservedGeneration != nil && *st.ObservedGeneration < ms.Generation {
				return false
			}
		}
	}
	return true
}

// rolloutEvents records a change of the rollout's phase or revision.
func (r *Reconciler[T]) rolloutEvents(b T, prior *workv1alpha1.RolloutStatus, st *workv1alpha1.RolloutStatus) {
	if prior != nil && prior.Revision == st.Revision && prior.Phase == st.Phase {
		return
	}
	reason, kind := ReasonRolloutStarted, "Normal"
	if prior != nil && prior.Revision == st.Revision {
		reason = ReasonRolloutProgress
	}
	switch st.Phase {
	case workv1alpha1.RolloutPhaseWaiting:
		reason = ReasonRolloutWaiting
	case workv1alpha1.RolloutPhasePaused:
		reason = ReasonRolloutPaused
	case workv1alpha1.RolloutPhaseFailed:
		reason, kind = ReasonRolloutFailed, "Warning"
	case workv1alpha1.RolloutPhaseRolledBack:
		reason = ReasonRolloutRolledBack
	case workv1alpha1.RolloutPhaseComplete:
		reason = ReasonRolloutComplete
	}
	r.recorder.Eventf(b, nil, kind, reason, "Rollout", "%s", bindingutil.Note(st.Message))
}

func derefOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// setRollout writes the rollout's status and conditions into s, and
// removes them when the binding has no gated rollout (ro nil) any more.
// It reports whether anything changed.
func setRollout(s *workv1alpha1.BindingStatus, ro *rolloutOutcome) bool {
	changed := false
	if ro == nil {
		if s.Rollout != nil {
			s.Rollout, changed = nil, true
		}
		for _, t := range []string{workv1alpha1.ConditionRolloutProgressing, workv1alpha1.ConditionRolloutPaused, workv1alpha1.ConditionRolloutFailed, workv1alpha1.ConditionRolloutComplete} {
			if meta.RemoveStatusCondition(&s.Conditions, t) {
				changed = true
			}
		}
		return changed
	}
	if !equality.Semantic.DeepEqual(s.Rollout, &ro.status) {
		st := ro.status
		s.Rollout, changed = &st, true
	}
	for _, c := range ro.conditions {
		if meta.SetStatusCondition(&s.Conditions, c) {
			changed = true
		}
	}
	return changed
}
