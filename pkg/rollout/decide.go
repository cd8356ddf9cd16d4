// Package rollout decides which clusters of a placement may be sent a new
// revision now, under the binding's rollout strategy (Progressive or
// Staged), from state kept in the binding's status. Decide is pure: the
// binding controller reads the API, calls it and writes what it returns.
package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Reasons of the rollout conditions.
const (
	ReasonProgressing       = "Progressing"
	ReasonWaitingApproval   = "WaitingForApproval"
	ReasonWaitingStage      = "WaitingBetweenStages"
	ReasonPaused            = "Paused"
	ReasonClustersFailed    = "ClustersFailed"
	ReasonStagesOverlap     = "StagesOverlap"
	ReasonNoGoodRevision    = "NoGoodRevision"
	ReasonRolledBack        = "RolledBack"
	ReasonUndone            = "Undone"
	ReasonComplete          = "Complete"
	ReasonNotProgressing    = "NotProgressing"
	ReasonNotPaused         = "NotPaused"
	ReasonNotFailed         = "NotFailed"
	ReasonNotComplete       = "NotComplete"
	ReasonInitialAllAtOnce  = "FirstRevision"
	ReasonNoClusters        = "NoClusters"
	unstagedName            = "(unstaged)"
	defaultProgressiveSlots = 1
)

// Cluster is one cluster of the placement as Decide sees it.
type Cluster struct {
	Name string
	// Stages are the indexes of the stages whose selectors pick the
	// cluster (Staged rollouts): none puts it after the last stage, more
	// than one is an error the status reports.
	Stages []int
	// HasWork: the cluster's Work exists.
	HasWork bool
	// Revision its Work holds; "" when it has none or the Work was
	// written before the binding had a rollout strategy.
	Revision string
	// Ready: the copy is healthy (the interpreter's health) and rolled out
	// (its status observed the member object's generation) at Revision.
	Ready bool
}

// Input is everything Decide reads.
type Input struct {
	Strategy *policyv1alpha1.RolloutStrategy
	// Target is the revision the template and override policies call for.
	Target string
	// Prior is the status written last time (nil at first).
	Prior *workv1alpha1.RolloutStatus
	// Control is the binding's spec.rolloutControl.
	Control *workv1alpha1.RolloutControl
	// Clusters of the placement (any order; Decide sorts them by name).
	Clusters []Cluster
	Now      time.Time
}

// Send is one cluster's Work to write with a revision.
type Send struct {
	Cluster  string
	Revision string
}

// Decision is what Decide returns.
type Decision struct {
	// Send lists the clusters whose Work must now hold another revision,
	// in the order of their names.
	Send []Send
	// Status is the binding's new status.rollout (History is Prior's:
	// the caller keeps it).
	Status workv1alpha1.RolloutStatus
	// Conditions are the four rollout conditions.
	Conditions []metav1.Condition
	// RequeueAfter is when something falls due (a cluster's
	// minSuccessSeconds or progress deadline, a stage's wait); 0 for never.
	RequeueAfter time.Duration
}

// state is one cluster during a decision.
type state struct {
	Cluster
	status workv1alpha1.ClusterRolloutStatus
	stage  int
	done   bool
	failed bool
	// sendRev is the revision to write in its Work, "" for none.
	sendRev string
}

type decider struct {
	in       Input
	s        *policyv1alpha1.RolloutStrategy
	prior    workv1alpha1.RolloutStatus
	same     bool // Prior was about the same target
	clusters []*state
	out      Decision
	next     time.Time
	reason   string
	deadline time.Duration
	byStage  map[int][]*state
	// stamp is the time written into the status for Now (stampOf).
	stamp metav1.Time
}

// stampOf is the time the status records for now: rounded up to the
// second, as the API stores times in whole seconds. Rounded down, a
// cluster that turned healthy late in a second would count as healthy
// for up to a second longer than it was, and be done before
// minSuccessSeconds; rounded up, every wait the status measures from a
// stamp lasts at least as long as asked. Comparisons use the exact time.
func stampOf(now time.Time) time.Time {
	if t := now.Truncate(time.Second); !t.Equal(now) {
		return t.Add(time.Second)
	}
	return now
}

// Decide decides which clusters may be sent which revision now. Ties
// never arise: clusters are taken in the order of their names, stages in
// the order the strategy lists them.
func Decide(in Input) Decision {
	d := &decider{in: in, s: in.Strategy}
	if d.s == nil {
		d.s = &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutProgressive}
	}
	if in.Prior != nil {
		d.prior = *in.Prior
	}
	d.same = d.prior.Revision == in.Target
	st := &d.out.Status
	st.Revision = in.Target
	st.LastGoodRevision = d.prior.LastGoodRevision
	st.History = d.prior.History
	d.stamp = metav1.Time{Time: stampOf(in.Now)}
	st.StartedAt = d.stamp.DeepCopy()
	if d.same && d.prior.StartedAt != nil {
		st.StartedAt = d.prior.StartedAt
	}
	d.observe()
	d.decide()
	for _, c := range d.clusters {
		st.Clusters = append(st.Clusters, c.status)
		if c.sendRev != "" {
			d.out.Send = append(d.out.Send, Send{Cluster: c.Name, Revision: c.sendRev})
		}
	}
	d.out.Conditions = conditions(st.Phase, d.reason, st.Message)
	if !d.next.IsZero() {
		d.out.RequeueAfter = max(d.next.Sub(in.Now), time.Second)
	}
	return d.out
}

// observe works out each cluster's stage, and whether it is done or
// failed at the target revision.
func (d *decider) observe() {
	priorOf := make(map[string]workv1alpha1.ClusterRolloutStatus, len(d.prior.Clusters))
	for _, c := range d.prior.Clusters {
		priorOf[c.Name] = c
	}
	sorted := slices.Clone(d.in.Clusters)
	slices.SortFunc(sorted, func(a, b Cluster) int { return cmp.Compare(a.Name, b.Name) })
	minSuccess := time.Duration(d.s.MinSuccessSeconds) * time.Second
	deadline := time.Duration(derefOr(d.s.ProgressDeadlineSeconds, policyv1alpha1.DefaultProgressDeadlineSeconds)) * time.Second
	d.deadline = deadline
	now := d.in.Now
	for _, c := range sorted {
		p := priorOf[c.Name]
		cs := workv1alpha1.ClusterRolloutStatus{Name: c.Name, Revision: c.Revision}
		if c.HasWork {
			cs.UpdatedAt = d.stamp.DeepCopy()
			if p.Revision == c.Revision && p.UpdatedAt != nil {
				cs.UpdatedAt = p.UpdatedAt
			}
		}
		if c.Ready {
			cs.HealthySince = d.stamp.DeepCopy()
			if p.Revision == c.Revision && p.HealthySince != nil {
				cs.HealthySince = p.HealthySince
			}
		}
		s := &state{Cluster: c, status: cs, stage: d.stageOf(c)}
		if d.s.Type == policyv1alpha1.RolloutStaged {
			s.status.Stage = d.stageName(s.stage)
		}
		onTarget := c.Revision == d.in.Target && c.HasWork
		if onTarget && c.Ready {
			doneAt := cs.HealthySince.Add(minSuccess)
			s.done = !now.Before(doneAt)
			if !s.done {
				d.due(doneAt)
			}
		}
		if onTarget && !s.done {
			failAt := cs.UpdatedAt.Add(deadline)
			s.failed = !now.Before(failAt)
			if !s.failed {
				d.due(failAt)
			}
		}
		// A cluster that failed at the target stays failed, also once
		// rolled back or recovered: a stopped rollout stays stopped until
		// the next revision (or an undo), not undone by its own rollback.
		if d.same && p.Failed {
			s.failed = true
		}
		s.status.Failed = s.failed
		d.clusters = append(d.clusters, s)
	}
}

// stageOf is the index of the stage that picks c: len(stages) (after the
// last stage) when none does, -1 when several do.
func (d *decider) stageOf(c Cluster) int {
	if d.s.Type != policyv1alpha1.RolloutStaged {
		return 0
	}
	switch len(c.Stages) {
	case 0:
		return len(d.s.Stages)
	case 1:
		return c.Stages[0]
	}
	return -1
}

func (d *decider) stageName(i int) string {
	if i >= 0 && i < len(d.s.Stages) {
		return d.s.Stages[i].Name
	}
	if i < 0 {
		return ""
	}
	return unstagedName
}

func (d *decider) due(t time.Time) {
	if d.next.IsZero() || t.Before(d.next) {
		d.next = t
	}
}

func (d *decider) send(c *state, revision string) {
	c.sendRev = revision
	if revision == d.in.Target {
		d.due(d.stamp.Add(d.deadline))
	}
	c.status.Revision = revision
	c.status.UpdatedAt = d.stamp.DeepCopy()
	c.status.HealthySince = nil
}

func (d *decider) set(phase workv1alpha1.RolloutPhase, reason, format string, args ...any) {
	d.out.Status.Phase = phase
	d.reason = reason
	d.out.Status.Message = fmt.Sprintf(format, args...)
}

func (d *decider) decide() {
	st := &d.out.Status
	target, good := d.in.Target, st.LastGoodRevision
	if d.in.Control != nil && d.in.Control.UndoRevision != "" && d.in.Control.UndoRevision == target {
		d.undo(good)
		return
	}
	if len(d.clusters) == 0 {
		// Placed nowhere (yet: the binding's controller may run before
		// the scheduler): no cluster ran the target, so it is not good.
		// Marked good here, it would make the first placement a change,
		// sent one cluster at a time behind health checks.
		d.set(workv1alpha1.RolloutPhaseWaiting, ReasonNoClusters, "No cluster is placed: revision %s goes out when the binding is placed.", target)
		return
	}
	if (d.prior.Revision == "" || good == "") && !d.anyOnAnotherRevision() {
		// The first revision a binding rolls out has nothing to protect:
		// it goes everywhere at once, also to clusters placed after it
		// went out (no revision is good yet). Known from the Works, not
		// from the status alone: a status lost to a stale write must not
		// make a change look like the first and skip its waves.
		d.firstRevision()
		return
	}
	// Clusters joining the placement get the last good revision, not one
	// that is still being tried.
	if good != "" && good != target {
		for _, c := range d.clusters {
			if !c.HasWork {
				d.send(c, good)
			}
		}
	}
	failed := 0
	for _, c := range d.clusters {
		if c.failed {
			failed++
		}
	}
	if failed > scaled(d.s.MaxFailures, len(d.clusters), 0) {
		d.fail(failed, good)
		return
	}
	if overlap := d.overlapping(); overlap != "" {
		d.set(workv1alpha1.RolloutPhaseFailed, ReasonStagesOverlap, "%s: each cluster must be in at most one stage (spec.rollout.stages[].clusterSelector)", overlap)
		return
	}
	if d.allDone() {
		st.LastGoodRevision = target
		if d.same && d.prior.Phase == workv1alpha1.RolloutPhaseComplete {
			// Recorded already: the stages as they ran, or none for a
			// first revision, which went everywhere at once. Walked again,
			// stages that never ran would be stamped now, one a second (a
			// stage starts in the second after the one before it is
			// done), and every binding rewritten as often when a
			// restarted controller manager decides them all again.
			st.Stages = d.prior.Stages
		} else {
			d.stagesDone()
		}
		d.set(workv1alpha1.RolloutPhaseComplete, ReasonComplete, "Revision %s runs on all %d clusters.", target, len(d.clusters))
		return
	}
	paused := d.in.Control != nil && d.in.Control.Paused
	if d.s.Type == policyv1alpha1.RolloutStaged {
		d.staged(paused)
	} else {
		d.progressive(paused)
	}
}

// anyOnAnotherRevision: some cluster's Work holds a revision other than
// the target.
func (d *decider) anyOnAnotherRevision() bool {
	for _, c := range d.clusters {
		if c.HasWork && c.Revision != "" && c.Revision != d.in.Target {
			return true
		}
	}
	return false
}

func (d *decider) firstRevision() {
	// A pause holds the first revision too: nothing new goes out.
	paused := d.in.Control != nil && d.in.Control.Paused
	for _, c := range d.clusters {
		if !paused && (!c.HasWork || c.Revision != d.in.Target) {
			d.send(c, d.in.Target)
		}
	}
	if d.allDone() && !d.anySent() {
		d.out.Status.LastGoodRevision = d.in.Target
		d.set(workv1alpha1.RolloutPhaseComplete, ReasonComplete, "Revision %s runs on all %d clusters.", d.in.Target, len(d.clusters))
		return
	}
	if paused {
		d.set(workv1alpha1.RolloutPhasePaused, ReasonPaused, "Paused (spec.rolloutControl.paused): revision %s, the binding's first, goes to every cluster at once when resumed.", d.in.Target)
		return
	}
	d.set(workv1alpha1.RolloutPhaseProgressing, ReasonInitialAllAtOnce, "Revision %s is the binding's first: sent to every cluster at once.", d.in.Target)
}

// undo abandons the target: every cluster not on the last good revision
// gets it back.
func (d *decider) undo(good string) {
	if good == "" {
		d.set(workv1alpha1.RolloutPhaseFailed, ReasonNoGoodRevision, "Undo of revision %s: there is no previous good revision to go back to; the clusters keep what they run.", d.in.Target)
		return
	}
	for _, c := range d.clusters {
		if !c.HasWork || c.Revision != good {
			d.send(c, good)
		}
	}
	d.set(workv1alpha1.RolloutPhaseRolledBack, ReasonUndone, "Revision %s was undone: clusters run revision %s; the next change starts a new rollout.", d.in.Target, good)
}

// fail stops the rollout, and with rollbackOnFailure puts the last good
// revision back where the target went out.
func (d *decider) fail(failed int, good string) {
	names := d.names(func(c *state) bool { return c.failed })
	msg := fmt.Sprintf("%d clusters failed (maxFailures %s): %s.", failed, describe(d.s.MaxFailures, "0"), names)
	if !d.s.RollbackOnFailure {
		d.set(workv1alpha1.RolloutPhaseFailed, ReasonClustersFailed, "%s The rollout stopped; clusters it did not reach keep revision %s.", msg, orNone(good))
		return
	}
	if good == "" {
		d.set(workv1alpha1.RolloutPhaseFailed, ReasonNoGoodRevision, "%s rollbackOnFailure: there is no previous good revision to go back to; nothing was rolled back.", msg)
		return
	}
	for _, c := range d.clusters {
		if c.HasWork && c.status.Revision == d.in.Target {
			d.send(c, good)
		}
	}
	d.set(workv1alpha1.RolloutPhaseFailed, ReasonRolledBack, "%s Rolled back to revision %s.", msg, good)
}

func (d *decider) overlapping() string {
	for _, c := range d.clusters {
		if c.stage < 0 {
			var stages []string
			for _, i := range c.Stages {
				stages = append(stages, d.stageName(i))
			}
			return fmt.Sprintf("cluster %s is selected by stages %s", c.Name, strings.Join(stages, ", "))
		}
	}
	return ""
}

func (d *decider) allDone() bool {
	for _, c := range d.clusters {
		if !c.done {
			return false
		}
	}
	return true
}

// pending reports whether c still has to be sent the target.
func (d *decider) pending(c *state) bool { return c.status.Revision != d.in.Target }

func (d *decider) anySent() bool {
	for _, c := range d.clusters {
		if c.sendRev != "" {
			return true
		}
	}
	return false
}

// inFlight: sent the target, neither done nor failed yet.
func (d *decider) inFlight(c *state) bool {
	return c.status.Revision == d.in.Target && !c.done && !c.failed
}

func (d *decider) progressive(paused bool) {
	slots := scaled(d.s.MaxConcurrency, len(d.clusters), defaultProgressiveSlots)
	d.fill(d.clusters, max(slots, 1), paused)
	if paused {
		d.set(workv1alpha1.RolloutPhasePaused, ReasonPaused, "Paused (spec.rolloutControl.paused): %s.", d.progress())
		return
	}
	d.set(workv1alpha1.RolloutPhaseProgressing, ReasonProgressing, "Revision %s: %s.", d.in.Target, d.progress())
}

// fill sends the target to pending clusters of cs, in order, while fewer
// than slots are in flight.
func (d *decider) fill(cs []*state, slots int, paused bool) {
	inFlight := 0
	for _, c := range cs {
		if d.inFlight(c) {
			inFlight++
		}
	}
	for _, c := range cs {
		if paused || inFlight >= slots {
			return
		}
		if d.pending(c) {
			d.send(c, d.in.Target)
			inFlight++
		}
	}
}

func (d *decider) progress() string {
	done, inFlight := 0, 0
	for _, c := range d.clusters {
		switch {
		case c.done:
			done++
		case d.inFlight(c):
			inFlight++
		}
	}
	return fmt.Sprintf("%d of %d clusters done, %d updating", done, len(d.clusters), inFlight)
}

// staged walks the stages in order: a stage starts once the one before is
// done (its failures within maxFailures), its waitSeconds passed and the
// approvals it needs given; stages no cluster is in are skipped.
func (d *decider) staged(paused bool) {
	st := &d.out.Status
	priorStages := map[string]workv1alpha1.RolloutStageStatus{}
	if d.same {
		for _, s := range d.prior.Stages {
			priorStages[s.Name] = s
		}
	}
	n := len(d.s.Stages)
	for i := 0; i <= n; i++ {
		name := d.stageName(i)
		ss := priorStages[name]
		ss.Name = name
		st.Stages = append(st.Stages, ss)
	}
	prev := -1 // the last stage with clusters before i
	for i := 0; i <= n; i++ {
		members := d.members(i)
		if len(members) == 0 && i == n {
			continue
		}
		// A stage without clusters passes at once, but its approvals
		// and waitSeconds still hold: a canary stage that lost its
		// clusters (failed over, relabelled) never opens the way to the
		// stages behind it.
		ss := &st.Stages[i]
		if ss.StartedAt == nil {
			if why, reason := d.mayStart(i, prev); why != "" {
				d.set(workv1alpha1.RolloutPhaseWaiting, reason, "%s (%s).", why, d.progress())
				return
			}
			if paused {
				break
			}
			ss.StartedAt = d.stamp.DeepCopy()
		}
		slots := len(members)
		if d.s.MaxConcurrency != nil {
			slots = max(scaled(d.s.MaxConcurrency, len(d.clusters), 1), 1)
		}
		d.fill(members, slots, paused)
		if !d.finished(members) {
			ss.CompletedAt = nil
			break
		}
		if ss.CompletedAt == nil {
			ss.CompletedAt = d.stamp.DeepCopy()
		}
		prev = i
	}
	if len(d.members(n)) == 0 {
		st.Stages = st.Stages[:n]
	}
	if paused {
		d.set(workv1alpha1.RolloutPhasePaused, ReasonPaused, "Paused (spec.rolloutControl.paused): %s.", d.progress())
		return
	}
	d.set(workv1alpha1.RolloutPhaseProgressing, ReasonProgressing, "Revision %s, stage %s: %s.", d.in.Target, d.current(), d.progress())
}

// mayStart says why stage i may not start yet ("" when it may), prev
// being the stage before it that has clusters (-1 for none).
func (d *decider) mayStart(i, prev int) (string, string) {
	st := &d.out.Status
	if prev >= 0 {
		p := d.s.Stages[prev]
		if end := st.Stages[prev].CompletedAt.Add(time.Duration(p.WaitSeconds) * time.Second); d.in.Now.Before(end) {
			d.due(end)
			return fmt.Sprintf("Stage %s is done; stage %s starts after its waitSeconds, at %s", p.Name, d.stageName(i), end.UTC().Format(time.RFC3339)), ReasonWaitingStage
		}
		if p.Approval == policyv1alpha1.ApprovalAfter && !d.in.Control.Approved(d.in.Target, p.Name, policyv1alpha1.ApprovalAfter) {
			return fmt.Sprintf("Stage %s is done and waits for approval (shepherd rollout approve --stage %s) before stage %s starts", p.Name, p.Name, d.stageName(i)), ReasonWaitingApproval
		}
	}
	if i < len(d.s.Stages) {
		s := d.s.Stages[i]
		if s.Approval == policyv1alpha1.ApprovalBefore && !d.in.Control.Approved(d.in.Target, s.Name, policyv1alpha1.ApprovalBefore) {
			return fmt.Sprintf("Stage %s waits for approval to start (shepherd rollout approve --stage %s)", s.Name, s.Name), ReasonWaitingApproval
		}
	}
	return "", ""
}

// members are the clusters of a stage, grouped once per decision.
func (d *decider) members(stage int) []*state {
	if d.byStage == nil {
		d.byStage = map[int][]*state{}
		for _, c := range d.clusters {
			d.byStage[c.stage] = append(d.byStage[c.stage], c)
		}
	}
	return d.byStage[stage]
}

// finished: every member is done or failed (failures within maxFailures,
// or the rollout would have stopped).
func (d *decider) finished(members []*state) bool {
	for _, c := range members {
		if !c.done && !c.failed {
			return false
		}
	}
	return true
}

// current names the first stage not finished.
func (d *decider) current() string {
	for i := 0; i <= len(d.s.Stages); i++ {
		if m := d.members(i); len(m) > 0 && !d.finished(m) {
			return d.stageName(i)
		}
	}
	return d.stageName(len(d.s.Stages))
}

func (d *decider) stagesDone() {
	if d.s.Type != policyv1alpha1.RolloutStaged {
		return
	}
	d.staged(false)
}

func (d *decider) names(pick func(*state) bool) string {
	var out []string
	for _, c := range d.clusters {
		if pick(c) {
			out = append(out, c.Name)
		}
	}
	const max = 10
	if len(out) > max {
		return strings.Join(out[:max], ", ") + fmt.Sprintf(" and %d more", len(out)-max)
	}
	return strings.Join(out, ", ")
}

// scaled resolves a number or percentage of total (rounded down); def
// when unset.
func scaled(v *intstr.IntOrString, total, def int) int {
	if v == nil {
		return def
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, false)
	if err != nil {
		return def
	}
	return n
}

func describe(v *intstr.IntOrString, def string) string {
	if v == nil {
		return def
	}
	return v.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func derefOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// conditions are the four rollout conditions for a phase.
func conditions(phase workv1alpha1.RolloutPhase, reason, message string) []metav1.Condition {
	c := func(t string, on bool, offReason string) metav1.Condition {
		if on {
			return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: message}
		}
		return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: offReason, Message: message}
	}
	progressing := phase == workv1alpha1.RolloutPhaseProgressing || phase == workv1alpha1.RolloutPhaseWaiting
	failed := phase == workv1alpha1.RolloutPhaseFailed
	return []metav1.Condition{
		c(workv1alpha1.ConditionRolloutProgressing, progressing, cmp.Or(reason, ReasonNotProgressing)),
		c(workv1alpha1.ConditionRolloutPaused, phase == workv1alpha1.RolloutPhasePaused, ReasonNotPaused),
		c(workv1alpha1.ConditionRolloutFailed, failed, ReasonNotFailed),
		c(workv1alpha1.ConditionRolloutComplete, phase == workv1alpha1.RolloutPhaseComplete, ReasonNotComplete),
	}
}
