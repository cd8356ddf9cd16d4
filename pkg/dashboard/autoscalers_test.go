package dashboard_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/dashboard/dashboardtest"
)

// at is the epoch plus minutes.
func at(minutes int) time.Time { return dashboardtest.Epoch.Add(time.Duration(minutes) * time.Minute) }

// fhpa is a FederatedHPA of ns scaling Deployment target between minR and
// maxR, at current replicas wanting desired.
func fhpa(ns, name, target string, minR, maxR, current, desired int32) *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
			MinReplicas:    ptr.To(minR), MaxReplicas: maxR,
		},
		Status: autoscalingv1alpha1.FederatedHPAStatus{CurrentReplicas: current, DesiredReplicas: desired},
	}
}

// fhpaEvent is an event of reason on FederatedHPA ns/name, recorded in
// ns at minute m, as the controller's recorder writes it.
func fhpaEvent(ns, name, reason, note string, m int) *eventsv1.Event {
	typ := corev1.EventTypeNormal
	if reason == federatedhpa.EventFailedRescale {
		typ = corev1.EventTypeWarning
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%d", name, m)},
		EventTime:  metav1.NewMicroTime(at(m)), Reason: reason, Note: note, Type: typ, Action: "Scale",
		Regarding: corev1.ObjectReference{APIVersion: "autoscaling.shepherd.io/v1alpha1", Kind: "FederatedHPA", Namespace: ns, Name: name,
			UID: types.UID("uid-" + ns + "-" + name)},
	}
}

func rescale(ns, name string, from, to int32, m int) *eventsv1.Event {
	return fhpaEvent(ns, name, federatedhpa.EventSuccessfulRescale, federatedhpa.RescaleNote(from, to, "cpu resource above target"), m)
}

// cron is a CronFederatedHPA of ns scaling target (apiVersion, kind,
// name) with one rule "r" and its recorded runs.
func cron(ns, name, apiVersion, kind, target string, runs ...any) *autoscalingv1alpha1.CronFederatedHPA {
	c := &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target},
			Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "r", Schedule: "0 8 * * *", TargetMaxReplicas: ptr.To[int32](10)}},
		},
	}
	h := autoscalingv1alpha1.ExecutionHistory{RuleName: "r"}
	for _, r := range runs {
		switch r := r.(type) {
		case autoscalingv1alpha1.SuccessfulExecution:
			h.SuccessfulExecutions = append(h.SuccessfulExecutions, r)
		case autoscalingv1alpha1.FailedExecution:
			h.FailedExecutions = append(h.FailedExecutions, r)
		}
	}
	c.Status.ExecutionHistories = []autoscalingv1alpha1.ExecutionHistory{h}
	return c
}

func mt(m int) *metav1.Time { return &metav1.Time{Time: at(m)} }

// historyLines writes a row's history as "minute source change message".
func historyLines(r dashboard.AutoscalerRow) []string {
	var out []string
	for _, h := range r.History {
		line := fmt.Sprintf("%d %s %q %s", int(h.Time.Sub(dashboardtest.Epoch).Minutes()), h.Source, h.Change(), h.Message)
		if h.Failed {
			line += " FAILED"
		}
		out = append(out, line)
	}
	return out
}

func TestBuildAutoscalers(t *testing.T) {
	web := fhpa("shop", "web", "web", 2, 10, 6, 6)
	web.Status.LastScaleTime = mt(5)
	web.Status.Clusters = []autoscalingv1alpha1.ClusterUtilization{
		{Name: "m2", Pods: 2, Excluded: "metrics stale: the newest sample is 5m0s old"},
		{Name: "m1", Pods: 4, ReadyPods: 3, Resources: []autoscalingv1alpha1.ResourceUtilization{
			{Name: corev1.ResourceCPU, AverageUtilization: ptr.To[int32](90)},
			{Name: corev1.ResourceMemory, AverageValue: ptr.To(resource.MustParse("512Mi"))}}},
	}
	web.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "SucceededRescale"},
		{Type: autoscalingv2.ScalingLimited, Status: corev1.ConditionTrue, Reason: "TooManyReplicas", Message: "the desired count is above maxReplicas"},
		{Type: autoscalingv1alpha1.ConditionMemberAutoscalerConflict, Status: corev1.ConditionFalse, Reason: "NoMemberAutoscaler"},
		{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: "FailedGetMetrics"},
	}
	forged := rescale("shop", "web", 6, 60, 7)
	forged.Namespace = "intruder" // recorded elsewhere: not shown
	karmadas := rescale("shop", "web", 6, 61, 7)
	karmadas.Regarding.APIVersion = "autoscaling.karmada.io/v1alpha1"
	older := rescale("shop", "web", 6, 62, 7)
	older.Regarding.UID = "uid-of-a-deleted-one"
	events := []*eventsv1.Event{
		rescale("shop", "web", 4, 6, 5), rescale("shop", "web", 2, 4, 1),
		fhpaEvent("shop", "web", federatedhpa.EventFailedRescale, "failed to set the replicas of Deployment web to 8: conflict", 3),
		// A HorizontalPodAutoscaler's note, as the controller wrote it before it said the old size.
		fhpaEvent("shop", "web", federatedhpa.EventSuccessfulRescale, "New size: 2; reason: All metrics below target", 0),
		fhpaEvent("shop", "web", federatedhpa.EventFailedGetMetrics, "no metrics", 2), // not a rescale
		rescale("shop", "api", 1, 3, 2), forged, karmadas, older,
	}
	crons := []*autoscalingv1alpha1.CronFederatedHPA{
		cron("shop", "bounds", "autoscaling.karmada.io/v1alpha1", "FederatedHPA", "web",
			autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(2), ExecutionTime: mt(2), AppliedMinReplicas: ptr.To[int32](2), AppliedMaxReplicas: ptr.To[int32](10)},
			autoscalingv1alpha1.FailedExecution{ScheduleTime: mt(4), ExecutionTime: mt(4), Message: "reading FederatedHPA shop/web: timeout"}),
		cron("shop", "nights", "apps/v1", "Deployment", "web",
			autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(5), ExecutionTime: mt(6), AppliedReplicas: ptr.To[int32](3), Message: "caught up 1m0s after its scheduled time"}),
		cron("other", "nights", "apps/v1", "Deployment", "web",
			autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(1), ExecutionTime: mt(1), AppliedReplicas: ptr.To[int32](9)}),
		cron("shop", "api-nights", "apps/v1", "Deployment", "api",
			autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(1), ExecutionTime: mt(1), AppliedReplicas: ptr.To[int32](1)}),
	}
	for _, tc := range []struct {
		name  string
		snap  *dashboard.Snapshot
		check func(t *testing.T, v dashboard.AutoscalersView)
	}{
		{name: "nothing", snap: &dashboard.Snapshot{Now: at(0)}, check: func(t *testing.T, v dashboard.AutoscalersView) {
			if len(v.Rows) != 0 || len(v.Schedules) != 0 {
				t.Errorf("view %+v", v)
			}
		}},
		{name: "rows by namespace and name, a binding's page linked",
			snap: &dashboard.Snapshot{Now: at(10), Bindings: []dashboard.Binding{dashboardtest.Binding("shop", "web", "p")},
				FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{fhpa("shop", "web", "web", 2, 10, 4, 4), fhpa("blog", "front", "front", 1, 3, 1, 1), fhpa("shop", "api", "api", 1, 5, 3, 3)}},
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				var got []string
				for _, r := range v.Rows {
					got = append(got, fmt.Sprintf("%s/%s %s %d..%d %d/%d %q", r.Namespace, r.Name, r.Target, r.Min, r.Max, r.Current, r.Desired, r.Workload))
				}
				want := []string{`blog/front Deployment/front 1..3 1/1 ""`, `shop/api Deployment/api 1..5 3/3 ""`,
					`shop/web Deployment/web 2..10 4/4 "/workloads/ns/shop/web-deployment"`}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("rows\n%q\nwant\n%q", got, want)
				}
			}},
		{name: "one page at a time",
			snap: func() *dashboard.Snapshot {
				s := &dashboard.Snapshot{Now: at(0)}
				for i := range dashboard.PageSize + 50 {
					s.FederatedHPAs = append(s.FederatedHPAs, fhpa("shop", fmt.Sprintf("h-%03d", dashboard.PageSize+49-i), "web", 1, 5, 1, 1))
				}
				return s
			}(),
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				if v.Total != dashboard.PageSize+50 || v.Page != 1 || v.Pages != 2 || len(v.Rows) != dashboard.PageSize || v.Rows[0].Name != "h-000" {
					t.Errorf("total %d, page %d of %d, %d rows from %s", v.Total, v.Page, v.Pages, len(v.Rows), v.Rows[0].Name)
				}
			}},
		{name: "status, members and conditions",
			snap: &dashboard.Snapshot{Now: at(10), FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{web}},
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				r := v.Rows[0]
				if r.LastScale == nil || !r.LastScale.Equal(at(5)) {
					t.Errorf("last scale %v", r.LastScale)
				}
				want := []dashboard.ClusterUsage{{Name: "m1", Pods: 4, Ready: 3, Resources: []string{"cpu 90%", "memory 512Mi"}},
					{Name: "m2", Pods: 2, Excluded: "metrics stale: the newest sample is 5m0s old"}}
				if !reflect.DeepEqual(r.Clusters, want) {
					t.Errorf("clusters %+v\nwant %+v", r.Clusters, want)
				}
				var conds []string
				for _, c := range r.Conditions {
					conds = append(conds, fmt.Sprintf("%s=%s %v", c.Type, c.Status, c.Good))
				}
				if want := []string{"AbleToScale=True true", "ScalingLimited=True false", "MemberAutoscalerConflict=False true", "ScalingActive=False false"}; !reflect.DeepEqual(conds, want) {
					t.Errorf("conditions %q, want %q", conds, want)
				}
			}},
		{name: "history from its events and the schedules that set its bounds or its target's replicas, oldest first",
			snap: &dashboard.Snapshot{Now: at(10), FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{web}, Events: events, CronFederatedHPAs: crons},
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				want := []string{
					`0 FederatedHPA "→ 2" All metrics below target`,
					`1 FederatedHPA "2 → 4" cpu resource above target`,
					`2 CronFederatedHPA bounds, rule r "" bounds set: minReplicas 2, maxReplicas 10`,
					`3 FederatedHPA "" failed to set the replicas of Deployment web to 8: conflict FAILED`,
					`4 CronFederatedHPA bounds, rule r "" reading FederatedHPA shop/web: timeout FAILED`,
					`5 FederatedHPA "4 → 6" cpu resource above target`,
					`6 CronFederatedHPA nights, rule r "→ 3" replicas set on schedule (caught up 1m0s after its scheduled time)`,
				}
				if got := historyLines(v.Rows[0]); !reflect.DeepEqual(got, want) {
					t.Errorf("history\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if v.Rows[0].Earlier != 0 || len(v.Rows[0].Shown) != len(want) {
					t.Errorf("shown %d, earlier %d", len(v.Rows[0].Shown), v.Rows[0].Earlier)
				}
			}},
		{name: "the table lists the newest entries, the chart all",
			snap: func() *dashboard.Snapshot {
				s := &dashboard.Snapshot{Now: at(100), FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{fhpa("shop", "web", "web", 1, 30, 1, 1)}}
				for m := range 25 {
					s.Events = append(s.Events, rescale("shop", "web", int32(m+1), int32(m+2), m))
				}
				return s
			}(),
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				r := v.Rows[0]
				if len(r.History) != 25 || len(r.Shown) != 20 || r.Earlier != 5 || r.Shown[0].To != 7 || r.Shown[19].To != 26 {
					t.Errorf("history %d, shown %d (from %d to %d), earlier %d", len(r.History), len(r.Shown), r.Shown[0].To, r.Shown[19].To, r.Earlier)
				}
				if r.Spark == nil || strings.Count(r.Spark.Points, " ")+1 != 1+2*25 || !strings.HasPrefix(r.Spark.Label, "replicas from 1 to 26 in 25 changes between 2026-01-01 00:00:00Z and 2026-01-01 01:40:00Z, lowest 1, highest 26") {
					t.Errorf("the chart does not draw every rescale: %+v", r.Spark)
				}
			}},
		{name: "schedules, their rules in the spec's order with the next and latest run",
			snap: func() *dashboard.Snapshot {
				c := cron("shop", "office", "apps/v1", "Deployment", "web",
					autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(1), ExecutionTime: mt(1), AppliedReplicas: ptr.To[int32](5)},
					autoscalingv1alpha1.FailedExecution{ScheduleTime: mt(3), ExecutionTime: mt(3), Message: "Deployment shop/web not found"})
				c.Spec.Rules = []autoscalingv1alpha1.CronFederatedHPARule{
					{Name: "r", Schedule: "30 7 * * 1-5", TimeZone: ptr.To("Europe/Paris"), TargetReplicas: ptr.To[int32](5)},
					{Name: "night", Schedule: "@daily", TargetMinReplicas: ptr.To[int32](1), Suspend: ptr.To(true)},
				}
				c.Status.ExecutionHistories[0].NextExecutionTime = mt(60)
				return &dashboard.Snapshot{Now: at(10), CronFederatedHPAs: []*autoscalingv1alpha1.CronFederatedHPA{c,
					cron("blog", "b", "autoscaling.shepherd.io/v1alpha1", "FederatedHPA", "front")}}
			}(),
			check: func(t *testing.T, v dashboard.AutoscalersView) {
				var got []string
				for _, s := range v.Schedules {
					for _, r := range s.Rules {
						line := fmt.Sprintf("%s/%s %s %s %q %q %s suspended=%v", s.Namespace, s.Name, s.Target, r.Name, r.Schedule, r.TimeZone, r.Sets, r.Suspended)
						if r.Next != nil {
							line += fmt.Sprintf(" next=%d", int(r.Next.Sub(dashboardtest.Epoch).Minutes()))
						}
						if r.Last != nil {
							line += fmt.Sprintf(" last=%d %s failed=%v", int(r.Last.Time.Sub(dashboardtest.Epoch).Minutes()), r.Last.Message, r.Last.Failed)
						}
						got = append(got, line)
					}
				}
				want := []string{
					`blog/b FederatedHPA/front r "0 8 * * *" "" maxReplicas 10 suspended=false`,
					`shop/office Deployment/web r "30 7 * * 1-5" "Europe/Paris" replicas 5 suspended=false next=60 last=3 Deployment shop/web not found failed=true`,
					`shop/office Deployment/web night "@daily" "" minReplicas 1 suspended=true`,
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("schedules\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []string
			for _, e := range tc.snap.Events {
				before = append(before, e.Name)
			}
			tc.check(t, dashboard.BuildAutoscalers(tc.snap, 1))
			var after []string
			for _, e := range tc.snap.Events {
				after = append(after, e.Name)
			}
			if !reflect.DeepEqual(before, after) {
				t.Error("the snapshot's events were reordered")
			}
		})
	}
}

// TestSparkline: the chart steps from each count to the next at the time
// of the change and holds the last one until now, on a scale from 0 to
// the highest of maxReplicas and the counts.
func TestSparkline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int32
		events []*eventsv1.Event
		// points are the polyline's; "" for no chart.
		points string
		top    int32
	}{
		{name: "no rescale, no chart", max: 10},
		{name: "only failures, no chart", max: 10,
			events: []*eventsv1.Event{fhpaEvent("shop", "web", federatedhpa.EventFailedRescale, "failed to set the replicas", 1)}},
		{name: "two rescales", max: 10, events: []*eventsv1.Event{rescale("shop", "web", 2, 4, 0), rescale("shop", "web", 4, 8, 1)},
			points: "2.0,30.8 2.0,23.6 120.0,23.6 120.0,9.2 238.0,9.2", top: 10},
		{name: "above maxReplicas: the scale grows", max: 4, events: []*eventsv1.Event{rescale("shop", "web", 8, 2, 0)},
			points: "2.0,2.0 2.0,29.0 238.0,29.0", top: 8},
		{name: "the old size unknown", max: 10, events: []*eventsv1.Event{
			fhpaEvent("shop", "web", federatedhpa.EventSuccessfulRescale, "New size: 5; reason: r", 0)},
			points: "2.0,20.0 238.0,20.0", top: 10},
		{name: "a rescale at the snapshot's time", max: 10, events: []*eventsv1.Event{rescale("shop", "web", 1, 10, 2)},
			points: "2.0,34.4 2.0,2.0 238.0,2.0", top: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &dashboard.Snapshot{Now: at(2), FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{fhpa("shop", "web", "web", 1, tc.max, 1, 1)}, Events: tc.events}
			sp := dashboard.BuildAutoscalers(s, 1).Rows[0].Spark
			switch {
			case tc.points == "" && sp != nil:
				t.Errorf("a chart without counts: %+v", sp)
			case tc.points != "" && sp == nil:
				t.Error("no chart")
			case sp != nil && (sp.Points != tc.points || sp.Max != tc.top || sp.Width != 240 || sp.Height != 40):
				t.Errorf("points %q (top %d), want %q (top %d)", sp.Points, sp.Max, tc.points, tc.top)
			}
		})
	}
}

// TestAutoscalersPage: /autoscalers lists each FederatedHPA with a link
// to its page, its target's workload page, bounds, counts, chart and
// conditions, and the CronFederatedHPAs' rules below; a FederatedHPA's
// page shows its members (one left out, marked) and its history oldest
// first with the failures marked; notes are escaped; the navigation
// links it; a live reload gets its live region alone; without
// autoscalers it says what they are; a FederatedHPA that is gone is 404.
func TestAutoscalersPage(t *testing.T) {
	snap := dashboardtest.Fleet(12, 30)
	h := fhpa("team-00", "app", "app-00000", 1, 10, 6, 6)
	h.Status.Clusters = []autoscalingv1alpha1.ClusterUtilization{
		{Name: "cluster-0000", Pods: 3, ReadyPods: 3, Resources: []autoscalingv1alpha1.ResourceUtilization{{Name: corev1.ResourceCPU, AverageUtilization: ptr.To[int32](95)}}},
		{Name: "cluster-0001", Excluded: "metrics stale: the newest sample is 5m0s old"},
	}
	h.Status.Conditions = []autoscalingv2.HorizontalPodAutoscalerCondition{
		{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "SucceededRescale"},
		{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: "FailedGetMetrics", Message: "no metrics"}}
	h.Status.LastScaleTime = mt(-10)
	snap.FederatedHPAs = []*autoscalingv1alpha1.FederatedHPA{fhpa("team-01", "orphan", "gone", 1, 3, 0, 0), h}
	snap.Events = append(snap.Events, rescale("team-00", "app", 2, 4, -20), rescale("team-00", "app", 4, 6, -10),
		fhpaEvent("team-00", "app", federatedhpa.EventFailedRescale, "failed: <script>alert(1)</script>", -15))
	snap.CronFederatedHPAs = []*autoscalingv1alpha1.CronFederatedHPA{cron("team-00", "app-bounds", "autoscaling.shepherd.io/v1alpha1", "FederatedHPA", "app",
		autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: mt(-5), ExecutionTime: mt(-5), AppliedMaxReplicas: ptr.To[int32](10)})}
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	chart := `<svg class="spark" width="240" height="40" viewBox="0 0 240 40" role="img" aria-label="replicas from 2 to 6 in 2 changes between 2025-12-31 23:40:00Z and 2026-01-01 00:00:00Z, lowest 2, highest 6 (the chart&#39;s top is 10)">`
	for _, page := range []struct {
		path string
		want []string
		// order are strings the page shows in this order.
		order []string
	}{
		{"/autoscalers", []string{
			`<a href="/autoscalers" aria-current="page">Autoscalers</a>`,
			"<strong>2</strong> FederatedHPAs · <strong>1</strong> CronFederatedHPA</p>",
			`<tr data-autoscaler="team-00/app">`, `<a href="/autoscalers/team-00/app">team-00/app</a>`,
			`<a href="/workloads/ns/team-00/app-00000-deployment">Deployment/app-00000</a>`,
			`<td class="num">1..10</td>`, `<td class="num">6/6</td>`, chart, `<polyline points="`,
			`<span class="cond ok" title="">AbleToScale=True (SucceededRescale)</span>`, `<span class="cond bad" title="no metrics">ScalingActive=False (FailedGetMetrics)</span>`,
			"Deployment/gone <span class=\"muted\">(no binding)</span>", `no rescale recorded`,
			`<tr data-schedule="team-00/app-bounds/r">`, "<code>0 8 * * *</code>", "bounds set: maxReplicas 10",
		}, []string{`data-autoscaler="team-00/app"`, `data-autoscaler="team-01/orphan"`, `data-schedule="team-00/app-bounds/r"`}},
		{"/autoscalers/team-00/app", []string{
			`<a href="/autoscalers" aria-current="page">Autoscalers</a>`, "<h1>FederatedHPA team-00/app</h1>",
			`<a href="/workloads/ns/team-00/app-00000-deployment">Deployment/app-00000</a>`, "6 now, 6 desired, between 1 and 10", "2025-12-31 23:50:00Z",
			`<tr data-cluster="cluster-0000">`, "cpu 95%", `<tr data-cluster="cluster-0001" class="attention">`, "metrics stale: the newest sample is 5m0s old",
			chart, `<td class="num">2 → 4</td>`, `<td class="num">4 → 6</td>`,
			`<span class="state unhealthy">failed</span> failed: &lt;script&gt;alert(1)&lt;/script&gt;`,
			"CronFederatedHPA app-bounds, rule r", "bounds set: maxReplicas 10",
		}, []string{"<td class=\"num\">2 → 4</td>", "failed: &lt;script", "<td class=\"num\">4 → 6</td>", "CronFederatedHPA app-bounds"}},
	} {
		code, body := get(t, c, ts.URL+page.path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", page.path, code)
		}
		for _, want := range page.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", page.path, want)
			}
		}
		if strings.Contains(body, "<script>alert") {
			t.Errorf("%s: an event's note is not escaped", page.path)
		}
		last := -1
		for _, o := range page.order {
			i := strings.Index(body, o)
			if i <= last {
				t.Errorf("%s: %q is not after the previous entries", page.path, o)
			}
			last = i
		}
		if _, frag := get(t, c, ts.URL+page.path, "X-Shepherd-Fragment", "1"); strings.Contains(frag, "<nav") || !strings.Contains(frag, "team-00/app") {
			t.Errorf("%s: the live reload is not the live region alone:\n%.300s", page.path, frag)
		}
	}
	if _, other := get(t, c, ts.URL+"/services"); !strings.Contains(other, `<a href="/autoscalers" >Autoscalers</a>`) {
		t.Error("the navigation of the other pages does not link the Autoscalers page")
	}
	if code, body := get(t, c, ts.URL+"/autoscalers/team-00/gone"); code != http.StatusNotFound || !strings.Contains(body, "FederatedHPA team-00/gone does not exist") {
		t.Errorf("a FederatedHPA that is gone: status %d", code)
	}

	empty, ec := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: &dashboard.Snapshot{Now: at(0)}}})
	code, body := get(t, ec, empty.URL+"/autoscalers")
	if code != http.StatusOK || !strings.Contains(body, "No FederatedHPA.") || !strings.Contains(body, "docs/autoscaling.md") || strings.Contains(body, "<table") {
		t.Errorf("the empty Autoscalers page (status %d) does not say what an autoscaler is:\n%s", code, body)
	}
}

// TestAutoscalersPages: past PageSize FederatedHPAs the list has pages,
// each linking the next and previous; a page out of range shows the last.
func TestAutoscalersPages(t *testing.T) {
	snap := &dashboard.Snapshot{Now: at(0)}
	for i := range dashboard.PageSize + 1 {
		snap.FederatedHPAs = append(snap.FederatedHPAs, fhpa("shop", fmt.Sprintf("h-%03d", i), "web", 1, 5, 1, 1))
	}
	ts, c := serve(t, dashboard.Options{Source: &dashboardtest.Source{Snap: snap}})
	for _, tc := range []struct {
		query      string
		rows       int
		has, lacks []string
	}{
		{"", dashboard.PageSize, []string{"Page 1 of 2", `<a href="/autoscalers?page=2" rel="next">Next</a>`, `data-autoscaler="shop/h-000"`}, []string{`rel="prev"`, `data-autoscaler="shop/h-100"`}},
		{"?page=2", 1, []string{"Page 2 of 2", `<a href="/autoscalers?page=1" rel="prev">Previous</a>`, `data-autoscaler="shop/h-100"`}, []string{`rel="next"`}},
		{"?page=9", 1, []string{"Page 2 of 2"}, nil},
		{"?page=x", dashboard.PageSize, []string{"Page 1 of 2"}, nil},
	} {
		code, body := get(t, c, ts.URL+"/autoscalers"+tc.query)
		if n := strings.Count(body, "<tr data-autoscaler="); code != http.StatusOK || n != tc.rows {
			t.Errorf("%s: status %d, %d rows, want %d", tc.query, code, n, tc.rows)
		}
		for _, h := range tc.has {
			if !strings.Contains(body, h) {
				t.Errorf("%s lacks %q", tc.query, h)
			}
		}
		for _, l := range tc.lacks {
			if strings.Contains(body, l) {
				t.Errorf("%s has %q", tc.query, l)
			}
		}
	}
}

// The workload page of a target is the one the Autoscalers page links: the
// binding of a Deployment is named after it.
func TestAutoscalerLinksItsBinding(t *testing.T) {
	b := dashboardtest.Binding("shop", "web", "p", workv1alpha1.TargetCluster{Name: "m1", Replicas: 2})
	s := &dashboard.Snapshot{Now: at(0), Bindings: []dashboard.Binding{b}, FederatedHPAs: []*autoscalingv1alpha1.FederatedHPA{fhpa("shop", "web", "web", 1, 5, 2, 2)}}
	if got, want := dashboard.BuildAutoscalers(s, 1).Rows[0].Workload, b.Ref().Path(); got != want {
		t.Errorf("links %q, want %q", got, want)
	}
}
