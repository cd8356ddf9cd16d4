package cronfederatedhpa

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// at is 2026-03-08 at hh:mm:ss UTC.
func at(hh, mm, ss int) time.Time { return time.Date(2026, 3, 8, hh, mm, ss, 0, time.UTC) }

func handled(t time.Time) *autoscalingv1alpha1.ExecutionHistory {
	return &autoscalingv1alpha1.ExecutionHistory{RuleName: "r", LastScheduleTime: &metav1.Time{Time: t}}
}

func TestDecide(t *testing.T) {
	daily := autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "0 8 * * *", TargetReplicas: ptr.To[int32](5)}
	hourly := autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "0 * * * *", TargetReplicas: ptr.To[int32](5)}
	suspended := hourly
	suspended.Suspend = ptr.To(true)
	paris := daily
	paris.TimeZone = ptr.To("Europe/Paris")
	for _, tc := range []struct {
		name      string
		rule      autoscalingv1alpha1.CronFederatedHPARule
		history   *autoscalingv1alpha1.ExecutionHistory
		created   time.Time
		now       time.Time
		run, skip bool
		scheduled time.Time
		late      bool
		next      time.Time
		err       string
	}{
		{name: "the scheduled minute: run", rule: daily, created: at(7, 0, 0), now: at(8, 0, 30), run: true, scheduled: at(8, 0, 0), next: at(8, 0, 0).Add(24 * time.Hour)},
		{name: "before it: wait for it", rule: daily, created: at(7, 0, 0), now: at(7, 59, 0), next: at(8, 0, 0)},
		{name: "already handled: never twice", rule: daily, history: handled(at(8, 0, 0)), created: at(7, 0, 0), now: at(8, 0, 40), next: at(8, 0, 0).Add(24 * time.Hour)},
		{name: "handled, told by the newest execution alone", rule: daily, created: at(7, 0, 0), now: at(8, 0, 40), next: at(8, 0, 0).Add(24 * time.Hour),
			history: &autoscalingv1alpha1.ExecutionHistory{RuleName: "r", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{{ScheduleTime: &metav1.Time{Time: at(8, 0, 0)}}}}},
		{name: "after a restart: the latest missed time once, late", rule: hourly, history: handled(at(5, 0, 0)), created: at(1, 0, 0), now: at(8, 30, 0),
			run: true, scheduled: at(8, 0, 0), late: true, next: at(9, 0, 0)},
		{name: "a time before the object existed is not run", rule: daily, created: at(8, 0, 10), now: at(8, 0, 30), next: at(8, 0, 0).Add(24 * time.Hour)},
		{name: "suspended: marked handled, not run, no next time", rule: suspended, history: handled(at(7, 0, 0)), created: at(1, 0, 0), now: at(8, 10, 0), skip: true, scheduled: at(8, 0, 0)},
		{name: "resumed: what passed while suspended is not caught up", rule: hourly, history: handled(at(8, 0, 0)), created: at(1, 0, 0), now: at(8, 20, 0), next: at(9, 0, 0)},
		{name: "time zone: 8:00 in Paris is 7:00 UTC in March", rule: paris, created: at(6, 0, 0), now: at(7, 0, 5), run: true, scheduled: at(7, 0, 0), next: at(7, 0, 0).Add(24 * time.Hour)},
		{name: "a bad schedule names the rule and the field", rule: autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "every day"}, created: at(1, 0, 0), now: at(8, 0, 0), err: "spec.rules[r]: schedule \"every day\": not a cron expression"},
		{name: "an unknown zone names timeZone", rule: autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "0 8 * * *", TimeZone: ptr.To("Mars/Olympus")}, created: at(1, 0, 0), now: at(8, 0, 0), err: "timeZone \"Mars/Olympus\""},
		{name: "TZ in the schedule is refused", rule: autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "CRON_TZ=UTC 0 8 * * *"}, created: at(1, 0, 0), now: at(8, 0, 0), err: "give the time zone in timeZone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(tc.rule, tc.history, tc.created, tc.now, time.UTC)
			if d.run != tc.run || d.skip != tc.skip || !d.scheduled.Equal(tc.scheduled) || d.late != tc.late || !d.next.Equal(tc.next) {
				t.Fatalf("decision %+v, want run %v skip %v scheduled %v late %v next %v", d, tc.run, tc.skip, tc.scheduled, tc.late, tc.next)
			}
			if !strings.Contains(d.err, tc.err) || (tc.err == "") != (d.err == "") {
				t.Fatalf("err %q, want %q", d.err, tc.err)
			}
		})
	}
}

// TestRestartNeverRunsTwice walks a fake clock over a day of an hourly
// rule with the controller down from 3:10 to 7:50: every scheduled time
// runs once, the four missed ones are caught up as one run at 7:50, and
// recording each decision as the reconciler does means no scheduled time
// is run twice, whichever minute the controller looks.
func TestRestartNeverRunsTwice(t *testing.T) {
	rule := autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "0 * * * *", TargetReplicas: ptr.To[int32](5), SuccessfulHistoryLimit: ptr.To[int32](32)}
	h := autoscalingv1alpha1.ExecutionHistory{RuleName: "r"}
	runs := map[time.Time]int{}
	var late []time.Time
	for now := at(0, 0, 30); now.Before(at(12, 0, 0)); now = now.Add(20 * time.Second) {
		if now.After(at(3, 10, 0)) && now.Before(at(7, 50, 0)) {
			continue // down
		}
		d := decide(rule, &h, at(0, 0, 0), now, time.UTC)
		if d.run {
			runs[d.scheduled]++
			if d.late {
				late = append(late, d.scheduled)
			}
		}
		h = record(h, rule, d, applied{replicas: rule.TargetReplicas}, now)
	}
	for s, n := range runs {
		if n != 1 {
			t.Errorf("%v ran %d times", s, n)
		}
	}
	if len(runs) != 12-4 || len(late) != 1 || !late[0].Equal(at(7, 0, 0)) {
		t.Fatalf("runs %v, late %v: want 8 runs (4 missed, caught up once as 7:00)", runs, late)
	}
	if len(h.SuccessfulExecutions) != 8 || !strings.Contains(h.SuccessfulExecutions[4].Message, "caught up") {
		t.Fatalf("history %+v", h.SuccessfulExecutions)
	}
}

func TestRecordKeepsTheLimits(t *testing.T) {
	rule := autoscalingv1alpha1.CronFederatedHPARule{Name: "r", Schedule: "0 * * * *", SuccessfulHistoryLimit: ptr.To[int32](2), FailedHistoryLimit: ptr.To[int32](0)}
	var h autoscalingv1alpha1.ExecutionHistory
	for i := range 3 {
		h = record(h, rule, decision{run: true, scheduled: at(i, 0, 0), next: at(i+1, 0, 0)}, applied{replicas: ptr.To[int32](int32(i))}, at(i, 0, 1))
	}
	h = record(h, rule, decision{run: true, scheduled: at(3, 0, 0)}, applied{err: "boom"}, at(3, 0, 1))
	if len(h.SuccessfulExecutions) != 2 || *h.SuccessfulExecutions[0].AppliedReplicas != 2 || len(h.FailedExecutions) != 0 {
		t.Fatalf("history %+v", h)
	}
	if !h.LastScheduleTime.Equal(&metav1.Time{Time: at(3, 0, 0)}) || h.NextExecutionTime != nil {
		t.Fatalf("last %v next %v", h.LastScheduleTime, h.NextExecutionTime)
	}
}
