package execution

import (
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Event reasons of drift, on the Work.
const (
	EventDrifted         = "Drifted"
	EventDriftOverwrite  = "DriftOverwritten"
	EventDriftResolved   = "DriftResolved"
	EventDiffReported    = "DiffReported"
	maxDriftsInCondition = 8
)

// applyStamp is when a Work was last applied in full, and at which
// generation. Kept in memory only: after a restart every Work is applied
// in full once, as before drift detection existed.
type applyStamp struct {
	generation int64
	at         time.Time
}

// stamps holds the applyStamp of each Work, by workKey.
type stamps struct{ sync.Map }

func (s *stamps) get(key string) (applyStamp, bool) {
	v, ok := s.Load(key)
	if !ok {
		return applyStamp{}, false
	}
	return v.(applyStamp), true
}

// applyDue says whether this reconcile applies the Work in full: its spec
// changed since the last full apply, the periodic apply is due, the last
// apply did not succeed, or none happened since the controller started.
// Otherwise the reconcile came from a member object changing (its
// generation moved past the one Shepherd applied) and only looks for
// drift, writing to the member only updates that a drift held back.
func (r *Reconciler) applyDue(work *workv1alpha1.Work) bool {
	st, ok := r.stamps.get(workKey(work))
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkConditionApplied)
	if wait, pending := revertIn(work.Status.Conditions, r.Options.DriftRevertDelay, r.clock.Now()); pending && wait == 0 {
		return true
	}
	return !ok || st.generation != work.Generation || time.Since(st.at) >= r.Options.ResyncPeriod ||
		applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != work.Generation
}

// untilDue is how long until the Work's next full apply: the periodic
// one, or sooner the put-back of a drift (revertIn) its conditions show.
func (r *Reconciler) untilDue(work *workv1alpha1.Work, conditions []metav1.Condition) time.Duration {
	due := time.Second
	if st, ok := r.stamps.get(workKey(work)); ok {
		due = max(time.Second, r.Options.ResyncPeriod-time.Since(st.at))
	}
	if wait, pending := revertIn(conditions, r.Options.DriftRevertDelay, r.clock.Now()); pending {
		due = min(due, max(time.Second, wait))
	}
	return due
}

// revertIn says whether conditions show a drift that an apply puts back
// (Drifted=True, reason DriftDetected: whenToApply is Always), and how long
// until that apply is due: delay after the drift was first reported. The
// time is read from the condition, so a restart keeps the schedule. Not
// fighting the edit at once leaves the member time to settle; the fields a
// member controller owns are declared as retained and never drift.
func revertIn(conditions []metav1.Condition, delay time.Duration, now time.Time) (time.Duration, bool) {
	c := meta.FindStatusCondition(conditions, workv1alpha1.WorkConditionDrifted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1alpha1.ReasonDriftDetected {
		return 0, false
	}
	return max(0, delay-now.Sub(c.LastTransitionTime.Time)), true
}

// lostOverwrites holds, by workKey, the drifts an apply put back whose
// status write was then refused (another controller wrote the Work
// first). The pass that retries finds the member objects matching and
// would call the drift resolved, as if the member's edit had been undone;
// carrying them over keeps the condition's reason true: an apply put the
// fields back. In memory only: after a restart the condition says
// DriftResolved, which is still true of the member objects.
type lostOverwrites struct{ sync.Map }

type lostOverwrite struct {
	generation  int64
	overwritten []string
}

// carry adds to s the overwrites a refused write of the same generation
// left, when this pass found no drift and put nothing back itself.
func (l *lostOverwrites) carry(key string, generation int64, s driftSummary) driftSummary {
	v, ok := l.Load(key)
	if !ok {
		return s
	}
	lost := v.(lostOverwrite)
	if lost.generation == generation && len(s.drifted) == 0 && len(s.overwritten) == 0 {
		s.overwritten = lost.overwritten
	}
	return s
}

// settle records the outcome of the status write of a pass that found s.
func (l *lostOverwrites) settle(key string, generation int64, s driftSummary, writeErr error) {
	if writeErr != nil && len(s.overwritten) > 0 {
		l.Store(key, lostOverwrite{generation: generation, overwritten: s.overwritten})
		return
	}
	if writeErr == nil {
		l.Delete(key)
	}
}

// previous is the recorded status of the member object of id.
func previous(prev []workv1alpha1.ManifestStatus, id workv1alpha1.ResourceIdentifier) *workv1alpha1.ManifestStatus {
	for i := range prev {
		if prev[i].Identifier.Kind != "" && sameObject(prev[i].Identifier, id) {
			return &prev[i]
		}
	}
	return nil
}

// driftSummary gathers the manifests' drifts of one pass.
type driftSummary struct {
	// drifted lists "object drifted since T: fields" of drifted objects.
	drifted []string
	// diffs lists "object: fields" of objects that differ (ReportDiff).
	diffs []string
	// held counts drifted objects left as they are (IfNotDrifted).
	held int
	// overwritten lists drifts an apply just put back.
	overwritten []string
}

func summarize(manifests []manifest, results map[int]manifestResult) driftSummary {
	var s driftSummary
	for i := range manifests {
		res, ok := results[i]
		if !ok {
			continue
		}
		what := describe(manifests[i].id)
		if res.verdict == verdictHold {
			s.held++
		}
		if res.overwritten != nil {
			s.overwritten = append(s.overwritten, what+": "+describeDrift(res.overwritten))
		}
		switch d := res.drift; {
		case d == nil:
		case d.Type == workv1alpha1.DriftDrifted:
			s.drifted = append(s.drifted, fmt.Sprintf("%s drifted since %s: %s", what, d.FirstSeenTime.UTC().Format(time.RFC3339), describeDrift(d)))
		case res.verdict == verdictReport:
			s.diffs = append(s.diffs, what+": "+describeDrift(d))
		}
	}
	return s
}

// reportMessage is the Applied message under ReportDiff.
func (s driftSummary) reportMessage(total int, cluster string) string {
	if len(s.diffs) == 0 {
		return fmt.Sprintf("nothing applied (applyStrategy.type: ReportDiff); all %d objects in cluster %s match what would be sent", total, cluster)
	}
	return fmt.Sprintf("nothing applied (applyStrategy.type: ReportDiff); %d of %d objects in cluster %s differ from what would be sent: %s",
		len(s.diffs), total, cluster, joinBounded(s.diffs))
}

func joinBounded(items []string) string {
	if len(items) <= maxDriftsInCondition {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxDriftsInCondition], "; ") + fmt.Sprintf("; and %d more", len(items)-maxDriftsInCondition)
}

// driftCondition is the Work's Drifted condition after a pass: True while
// an object is drifted, False once none is (when it was True before);
// nil on a Work that never drifted. changed says whether it differs from
// the Work's current one (an event then tells).
func driftCondition(work *workv1alpha1.Work, s driftSummary) (*metav1.Condition, bool) {
	prev := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkConditionDrifted)
	var c metav1.Condition
	switch {
	case len(s.drifted) > 0:
		c = metav1.Condition{Type: workv1alpha1.WorkConditionDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonDriftDetected,
			Message: "fields Shepherd applied were changed in the member; the next apply puts them back: " + joinBounded(s.drifted)}
		if work.Spec.ApplyStrategy.HoldsDrift() {
			c.Reason = workv1alpha1.ReasonDriftHeld
			c.Message = "fields Shepherd applied were changed in the member; applyStrategy.whenToApply: IfNotDrifted leaves these objects as they are until the edit is undone or the object deleted: " +
				joinBounded(s.drifted)
		}
	case prev == nil:
		return nil, false
	case len(s.overwritten) > 0:
		c = metav1.Condition{Type: workv1alpha1.WorkConditionDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonDriftOverwritten,
			Message: "an apply put back the fields changed in the member: " + joinBounded(s.overwritten)}
	case prev.Status == metav1.ConditionFalse:
		return prev, false
	default:
		c = metav1.Condition{Type: workv1alpha1.WorkConditionDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonDriftResolved,
			Message: "the member objects match what Shepherd applied"}
	}
	c.Message = truncate(c.Message, maxMessage)
	changed := prev == nil || prev.Status != c.Status || prev.Reason != c.Reason || prev.Message != c.Message
	return &c, changed
}

// reportDrift emits the event of a changed Drifted condition.
func (r *Reconciler) reportDrift(work *workv1alpha1.Work, c *metav1.Condition, changed bool, s driftSummary) {
	if c == nil || !changed {
		return
	}
	typ, reason := corev1.EventTypeWarning, EventDrifted
	switch c.Reason {
	case workv1alpha1.ReasonDriftOverwritten:
		typ, reason = corev1.EventTypeNormal, EventDriftOverwrite
	case workv1alpha1.ReasonDriftResolved:
		typ, reason = corev1.EventTypeNormal, EventDriftResolved
	}
	r.Recorder.Eventf(work, nil, typ, reason, "DetectDrift", "%s", truncate(c.Message, maxEventNote))
}

// observedGone says the work status controller found no member object for
// ms: an object has a generation or, without one, a resourceVersion
// recorded.
func observedGone(ms workv1alpha1.ManifestStatus) bool {
	return ms.Generation == 0 && ms.ResourceVersion == ""
}

// memberEdited passes a Work status update in which a member object's
// generation, as the work status controller observed it, moved past the
// one Shepherd's last apply left (manifestStatuses[].appliedGeneration):
// someone else changed its spec, so it is looked at for drift at once
// rather than at the next periodic apply; likewise a kind without a
// generation whose resourceVersion moved, and an object deleted in the
// member (see editedSince).
func memberEdited() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*workv1alpha1.Work)
			n, ok2 := e.ObjectNew.(*workv1alpha1.Work)
			return ok1 && ok2 && editedSince(o.Status.ManifestStatuses, n.Status.ManifestStatuses)
		},
	}
}

// editedSince reports whether a manifest of now shows an edit by someone
// else that before did not: a member generation past its applied one, or,
// for a kind without a generation, an observed resourceVersion that is
// not the one Shepherd's own last apply left (and not the one observed
// before), or an object Shepherd applied that was there and is gone (a
// deletion in the member, which the next pass puts back).
func editedSince(before, now []workv1alpha1.ManifestStatus) bool {
	for _, ms := range now {
		p := previous(before, ms.Identifier)
		switch {
		case observedGone(ms) && (ms.AppliedGeneration != 0 || ms.AppliedResourceVersion != ""):
			if p != nil && !observedGone(*p) {
				return true
			}
		case ms.AppliedGeneration != 0 && ms.Generation > ms.AppliedGeneration:
			if p == nil || p.Generation != ms.Generation {
				return true
			}
		case ms.Generation == 0 && ms.AppliedResourceVersion != "" && ms.ResourceVersion != "" && ms.ResourceVersion != ms.AppliedResourceVersion:
			if p == nil || p.ResourceVersion != ms.ResourceVersion {
				return true
			}
		}
	}
	return false
}
