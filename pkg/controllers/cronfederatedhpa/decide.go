package cronfederatedhpa

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cronschedule"
)

// lateAfter: a run this much after its scheduled time says it was caught up late.
const lateAfter = time.Minute

// maxSteps bounds the walk through missed scheduled times (a week of
// every-minute runs).
const maxSteps = 7 * 24 * 60

// ParseSchedule reads a rule's schedule in its time zone (unset: def),
// by the rule of package cronschedule; the errors name the field.
func ParseSchedule(schedule string, timeZone *string, def *time.Location) (cron.Schedule, *time.Location, error) {
	s, err := cronschedule.Parse(schedule)
	if err != nil {
		return nil, nil, fmt.Errorf("schedule %q: %v", schedule, err)
	}
	loc, err := cronschedule.Zone(ptr.Deref(timeZone, ""), def)
	if err != nil {
		return nil, nil, fmt.Errorf("timeZone %q: %v", ptr.Deref(timeZone, ""), err)
	}
	return s, loc, nil
}

// decision is what to do about one rule now.
type decision struct {
	rule string
	// run: apply the rule for scheduled. skip: mark scheduled handled
	// without running (the rule is suspended).
	run, skip bool
	scheduled time.Time
	// late: scheduled passed longer ago than lateAfter (a restart).
	late bool
	// next is the rule's next scheduled time; zero while suspended or broken.
	next time.Time
	// err says why the rule cannot run (schedule or time zone).
	err string
}

// lastHandled is the latest scheduled time the rule handled, from its
// history (LastScheduleTime, else its newest execution), else since.
func lastHandled(h *autoscalingv1alpha1.ExecutionHistory, since time.Time) time.Time {
	last := since
	if h == nil {
		return last
	}
	if h.LastScheduleTime != nil && h.LastScheduleTime.After(last) {
		last = h.LastScheduleTime.Time
	}
	for _, e := range h.SuccessfulExecutions {
		if e.ScheduleTime != nil && e.ScheduleTime.After(last) {
			last = e.ScheduleTime.Time
		}
	}
	for _, e := range h.FailedExecutions {
		if e.ScheduleTime != nil && e.ScheduleTime.After(last) {
			last = e.ScheduleTime.Time
		}
	}
	return last
}

// decide says what to do about rule at now. since is when the
// CronFederatedHPA was created: no time before it is run. A scheduled
// time is run at most once, however many passed since the last one
// handled (only the latest of them runs: a restart catches up once), and
// never again after it is recorded.
func decide(rule autoscalingv1alpha1.CronFederatedHPARule, h *autoscalingv1alpha1.ExecutionHistory, since, now time.Time, def *time.Location) decision {
	d := decision{rule: rule.Name}
	sched, loc, err := ParseSchedule(rule.Schedule, rule.TimeZone, def)
	if err != nil {
		d.err = "spec.rules[" + rule.Name + "]: " + err.Error()
		return d
	}
	last := lastHandled(h, since)
	var due time.Time
	t := sched.Next(last.In(loc))
	for steps := 0; !t.IsZero() && !t.After(now) && steps < maxSteps; steps++ {
		due = t
		t = sched.Next(t)
	}
	if !t.IsZero() && !t.After(now) {
		// More missed times than the walk covers: the latest is still the
		// one to run; find it from just before now.
		due = time.Time{}
		for t = sched.Next(now.Add(-24 * time.Hour).In(loc)); !t.After(now); t = sched.Next(t) {
			due = t
		}
	}
	if !due.IsZero() {
		d.scheduled = due
		if ptr.Deref(rule.Suspend, false) {
			d.skip = true
		} else {
			d.run, d.late = true, now.Sub(due) > lateAfter
		}
	}
	if !ptr.Deref(rule.Suspend, false) {
		d.next = t.UTC()
	}
	return d
}

// applied is what a run set, or why it failed.
type applied struct {
	replicas, minReplicas, maxReplicas *int32
	err                                string
}

// record is h after d: the scheduled time marked handled, a run's outcome
// added first and the oldest beyond the rule's limits dropped, and the
// next time.
func record(h autoscalingv1alpha1.ExecutionHistory, rule autoscalingv1alpha1.CronFederatedHPARule, d decision, a applied, now time.Time) autoscalingv1alpha1.ExecutionHistory {
	h.RuleName = rule.Name
	h.NextExecutionTime = nil
	if !d.next.IsZero() {
		h.NextExecutionTime = &metav1.Time{Time: d.next}
	}
	if d.scheduled.IsZero() {
		return h
	}
	h.LastScheduleTime = &metav1.Time{Time: d.scheduled}
	if !d.run {
		return h
	}
	at, sched := &metav1.Time{Time: now}, &metav1.Time{Time: d.scheduled}
	if a.err != "" {
		h.FailedExecutions = append([]autoscalingv1alpha1.FailedExecution{{ScheduleTime: sched, ExecutionTime: at, Message: a.err}}, h.FailedExecutions...)
		h.FailedExecutions = h.FailedExecutions[:min(len(h.FailedExecutions), int(ptr.Deref(rule.FailedHistoryLimit, 3)))]
		if len(h.FailedExecutions) == 0 {
			h.FailedExecutions = nil
		}
		return h
	}
	s := autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: sched, ExecutionTime: at,
		AppliedReplicas: a.replicas, AppliedMinReplicas: a.minReplicas, AppliedMaxReplicas: a.maxReplicas}
	if d.late {
		s.Message = fmt.Sprintf("caught up %s after its scheduled time (the controller was not running then)", now.Sub(d.scheduled).Round(time.Second))
	}
	h.SuccessfulExecutions = append([]autoscalingv1alpha1.SuccessfulExecution{s}, h.SuccessfulExecutions...)
	h.SuccessfulExecutions = h.SuccessfulExecutions[:min(len(h.SuccessfulExecutions), int(ptr.Deref(rule.SuccessfulHistoryLimit, 3)))]
	return h
}

// wake is the earliest next time among ds (zero: none).
func wake(ds []decision) time.Time {
	var w time.Time
	for _, d := range ds {
		if !d.next.IsZero() && (w.IsZero() || d.next.Before(w)) {
			w = d.next
		}
	}
	return w
}
