package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/federatedhpa"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// AutoscalersView is the Autoscalers page: every FederatedHPA with what it
// scales, its bounds and counts, what each member measured, its
// conditions and its replica history; and every CronFederatedHPA's rules.
type AutoscalersView struct {
	// Rows are one page of the FederatedHPAs, by namespace and name.
	Rows []AutoscalerRow
	// Total counts the FederatedHPAs; Page is 1-based, Pages at least 1.
	Total, Page, Pages int
	// Schedules are the CronFederatedHPAs, by namespace and name.
	Schedules []ScheduleRow
}

// AutoscalerRow is one FederatedHPA.
type AutoscalerRow struct {
	Namespace, Name string
	// Target is the workload it scales, "Deployment/web".
	Target string
	// Workload is the target's workload page, "" when it has no binding.
	Workload         string
	Min, Max         int32
	Current, Desired int32
	LastScale        *time.Time
	// Clusters are the members it measured, by name.
	Clusters   []ClusterUsage
	Conditions []AutoscalerCondition
	// History is what set its target's replicas or its bounds, oldest
	// first; Shown is its newest maxHistoryRows entries, Earlier counts
	// the others.
	History []HistoryEntry
	Shown   []HistoryEntry
	Earlier int
	// Spark draws the replicas History set over time; nil without any.
	Spark *Sparkline
}

// Path is the FederatedHPA's page.
func (r AutoscalerRow) Path() string { return "/autoscalers/" + r.Namespace + "/" + r.Name }

// ClusterUsage is what a FederatedHPA measured in one member.
type ClusterUsage struct {
	Name        string
	Pods, Ready int32
	// Resources are the averages, "cpu 90%" (of the requests) or
	// "memory 512Mi" (per pod), in the status's order.
	Resources []string
	// Excluded says why the member was left out; empty when it counted.
	Excluded string
}

// AutoscalerCondition is one condition of a FederatedHPA.
type AutoscalerCondition struct {
	Type, Status, Reason, Message string
	// Good: the condition says all is well (AbleToScale and ScalingActive
	// True; ScalingLimited and MemberAutoscalerConflict False).
	Good bool
}

// HistoryEntry is one change of a FederatedHPA's target replicas or
// bounds, or a failure to change them.
type HistoryEntry struct {
	Time time.Time
	// Source is what made it: "FederatedHPA", or "CronFederatedHPA NAME,
	// rule RULE".
	Source string
	// From and To are the replicas before and after; -1 when not known
	// (From) or not set (To: bounds, failures).
	From, To int32
	// Message says why, what a schedule set, or why it failed.
	Message string
	Failed  bool
}

// Change is the entry's change of replicas: "2 → 4", "→ 5", or "".
func (h HistoryEntry) Change() string {
	switch {
	case h.To < 0:
		return ""
	case h.From < 0:
		return "→ " + strconv.Itoa(int(h.To))
	}
	return strconv.Itoa(int(h.From)) + " → " + strconv.Itoa(int(h.To))
}

// Sparkline is a small step chart of replicas over time, drawn by the
// server as an inline SVG polyline (no script).
type Sparkline struct {
	Width, Height int
	// Points are the polyline's "x,y" pairs.
	Points string
	// Max is the count at the top of the chart.
	Max int32
	// Label reads the chart for screen readers and on hover.
	Label string
}

// ScheduleRow is one CronFederatedHPA.
type ScheduleRow struct {
	Namespace, Name string
	// Target is what it scales, "FederatedHPA/web" or "Deployment/web".
	Target string
	Rules  []ScheduleRule
}

// ScheduleRule is one rule of a CronFederatedHPA and its latest run.
type ScheduleRule struct {
	Name, Schedule, TimeZone string
	// Sets is what it sets: "replicas 5", "minReplicas 2, maxReplicas 10".
	Sets      string
	Suspended bool
	Next      *time.Time
	// Last is its latest run, nil before the first.
	Last *HistoryEntry
}

// maxHistoryRows is how many history entries a row lists: the chart
// draws them all.
const maxHistoryRows = 20

// BuildAutoscalers builds page page (1-based, PageSize rows a page) of the
// Autoscalers page from the snapshot: the FederatedHPAs' status and
// events, and the CronFederatedHPAs' rules and execution histories.
// Everything comes from what the hub stores, so the history is the same
// after the dashboard restarts.
func BuildAutoscalers(s *Snapshot, page int) AutoscalersView {
	hpas := slices.Clone(s.FederatedHPAs)
	slices.SortFunc(hpas, func(a, b *autoscalingv1alpha1.FederatedHPA) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	v := AutoscalersView{Total: len(hpas), Pages: max(1, (len(hpas)+PageSize-1)/PageSize)}
	v.Page = min(max(page, 1), v.Pages)
	lo := (v.Page - 1) * PageSize
	idx := indexAutoscalers(s)
	for _, h := range hpas[lo:min(lo+PageSize, len(hpas))] {
		v.Rows = append(v.Rows, buildAutoscaler(s, idx, h))
	}
	for _, c := range s.CronFederatedHPAs {
		v.Schedules = append(v.Schedules, buildSchedule(c))
	}
	slices.SortFunc(v.Schedules, func(a, b ScheduleRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return v
}

// BuildAutoscaler builds the page of FederatedHPA namespace/name; false
// when the snapshot has none.
func BuildAutoscaler(s *Snapshot, namespace, name string) (AutoscalerRow, bool) {
	for _, h := range s.FederatedHPAs {
		if h.Namespace == namespace && h.Name == name {
			return buildAutoscaler(s, indexAutoscalers(s), h), true
		}
	}
	return AutoscalerRow{}, false
}

// indexAutoscalers finds the rescale events and the schedules of every
// FederatedHPA at once: a page reads each event of the hub once, not once
// per FederatedHPA.
func indexAutoscalers(s *Snapshot) autoscalerIndex {
	idx := autoscalerIndex{events: map[Object][]*eventsv1.Event{}, crons: map[string][]*autoscalingv1alpha1.CronFederatedHPA{}}
	for _, e := range s.Events {
		if r := e.Regarding; r.Kind == "FederatedHPA" && (e.Reason == federatedhpa.EventSuccessfulRescale || e.Reason == federatedhpa.EventFailedRescale) {
			o := Object{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
			idx.events[o] = append(idx.events[o], e)
		}
	}
	for _, c := range s.CronFederatedHPAs {
		idx.crons[c.Namespace] = append(idx.crons[c.Namespace], c)
	}
	return idx
}

// autoscalerIndex holds the rescale events by the FederatedHPA they
// regard, and the CronFederatedHPAs by namespace.
type autoscalerIndex struct {
	events map[Object][]*eventsv1.Event
	crons  map[string][]*autoscalingv1alpha1.CronFederatedHPA
}

func buildAutoscaler(s *Snapshot, idx autoscalerIndex, h *autoscalingv1alpha1.FederatedHPA) AutoscalerRow {
	ref := h.Spec.ScaleTargetRef
	st := h.Status
	r := AutoscalerRow{Namespace: h.Namespace, Name: h.Name, Target: ref.Kind + "/" + ref.Name,
		Min: ptr.Deref(h.Spec.MinReplicas, 1), Max: h.Spec.MaxReplicas, Current: st.CurrentReplicas, Desired: st.DesiredReplicas}
	if b, ok := s.Find(Ref{Namespace: h.Namespace, Name: names.BindingName(ref.Kind, ref.Name)}); ok {
		r.Workload = b.Ref().Path()
	}
	if st.LastScaleTime != nil {
		r.LastScale = &st.LastScaleTime.Time
	}
	for _, c := range st.Clusters {
		u := ClusterUsage{Name: c.Name, Pods: c.Pods, Ready: c.ReadyPods, Excluded: c.Excluded}
		for _, res := range c.Resources {
			switch {
			case res.AverageUtilization != nil:
				u.Resources = append(u.Resources, fmt.Sprintf("%s %d%%", res.Name, *res.AverageUtilization))
			case res.AverageValue != nil:
				u.Resources = append(u.Resources, fmt.Sprintf("%s %s", res.Name, res.AverageValue.String()))
			}
		}
		r.Clusters = append(r.Clusters, u)
	}
	slices.SortFunc(r.Clusters, func(a, b ClusterUsage) int { return cmp.Compare(a.Name, b.Name) })
	for _, c := range st.Conditions {
		r.Conditions = append(r.Conditions, AutoscalerCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, Good: conditionGood(c)})
	}
	r.History = history(idx, h)
	r.Shown, r.Earlier = r.History, 0
	if n := len(r.History); n > maxHistoryRows {
		r.Shown, r.Earlier = r.History[n-maxHistoryRows:], n-maxHistoryRows
	}
	r.Spark = sparkline(r.History, r.Max, s.Now)
	return r
}

// conditionGood says whether a FederatedHPA's condition says all is well.
func conditionGood(c autoscalingv2.HorizontalPodAutoscalerCondition) bool {
	switch c.Type {
	case autoscalingv1alpha1.ConditionScalingLimited, autoscalingv1alpha1.ConditionMemberAutoscalerConflict:
		return c.Status == corev1.ConditionFalse
	}
	return c.Status == corev1.ConditionTrue
}

// history gathers, oldest first, what changed h's target's replicas or h's
// bounds: h's rescale events (those EventShownOn allows, of this very
// FederatedHPA) and the runs of the CronFederatedHPAs of its namespace
// that set its bounds or its target's replicas. Entries at the same time
// keep a fixed order: by source, then message.
func history(idx autoscalerIndex, h *autoscalingv1alpha1.FederatedHPA) []HistoryEntry {
	var out []HistoryEntry
	self := Object{Kind: "FederatedHPA", Namespace: h.Namespace, Name: h.Name}
	for _, e := range idx.events[self] {
		if !rescaleEventOf(e, h, self) {
			continue
		}
		entry := HistoryEntry{Time: eventTime(e), Source: "FederatedHPA", From: -1, To: -1, Message: e.Note}
		switch e.Reason {
		case federatedhpa.EventSuccessfulRescale:
			if rs, ok := federatedhpa.ParseRescaleNote(e.Note); ok {
				entry.To, entry.Message = rs.To, rs.Reason
				if rs.HasFrom {
					entry.From = rs.From
				}
			}
		case federatedhpa.EventFailedRescale:
			entry.Failed = true
		}
		out = append(out, entry)
	}
	for _, c := range idx.crons[h.Namespace] {
		bounds := namesFederatedHPA(c.Spec.ScaleTargetRef, h.Name)
		if !bounds && !sameWorkload(c.Spec.ScaleTargetRef, h.Spec.ScaleTargetRef) {
			continue
		}
		for _, eh := range c.Status.ExecutionHistories {
			out = append(out, cronEntries(c.Name, eh)...)
		}
	}
	slices.SortStableFunc(out, func(a, b HistoryEntry) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Message, b.Message))
	})
	return out
}

// rescaleEventOf says whether e is a rescale event of h: a
// SuccessfulRescale or FailedRescale regarding a FederatedHPA of
// Shepherd's group, shown on it (recorded in its namespace), and not of an
// earlier FederatedHPA of the same name.
func rescaleEventOf(e *eventsv1.Event, h *autoscalingv1alpha1.FederatedHPA, self Object) bool {
	if e.Reason != federatedhpa.EventSuccessfulRescale && e.Reason != federatedhpa.EventFailedRescale {
		return false
	}
	gv, err := schema.ParseGroupVersion(e.Regarding.APIVersion)
	if err != nil || gv.Group != autoscalingv1alpha1.GroupName || !EventShownOn(e, self) {
		return false
	}
	return e.Regarding.UID == "" || h.UID == "" || e.Regarding.UID == h.UID
}

// namesFederatedHPA says whether a CronFederatedHPA's target is the
// FederatedHPA name (of Shepherd's group, or Karmada's, which means it).
func namesFederatedHPA(ref autoscalingv2.CrossVersionObjectReference, name string) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && ref.Kind == "FederatedHPA" && ref.Name == name &&
		(gv.Group == autoscalingv1alpha1.GroupName || gv.Group == "autoscaling.karmada.io")
}

// sameWorkload says whether two references name one workload: the same
// group, kind and name.
func sameWorkload(a, b autoscalingv2.CrossVersionObjectReference) bool {
	ga, errA := schema.ParseGroupVersion(a.APIVersion)
	gb, errB := schema.ParseGroupVersion(b.APIVersion)
	return errA == nil && errB == nil && ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

// cronEntries are a rule's recorded runs.
func cronEntries(cron string, eh autoscalingv1alpha1.ExecutionHistory) []HistoryEntry {
	source := "CronFederatedHPA " + cron + ", rule " + eh.RuleName
	var out []HistoryEntry
	for _, x := range eh.SuccessfulExecutions {
		e := HistoryEntry{Time: runTime(x.ExecutionTime, x.ScheduleTime), Source: source, From: -1, To: -1}
		if x.AppliedReplicas != nil {
			e.To, e.Message = *x.AppliedReplicas, "replicas set on schedule"
		} else {
			e.Message = "bounds set: " + bounds(x.AppliedMinReplicas, x.AppliedMaxReplicas)
		}
		if x.Message != "" {
			e.Message += " (" + x.Message + ")"
		}
		out = append(out, e)
	}
	for _, x := range eh.FailedExecutions {
		out = append(out, HistoryEntry{Time: runTime(x.ExecutionTime, x.ScheduleTime), Source: source, From: -1, To: -1,
			Message: x.Message, Failed: true})
	}
	return out
}

// runTime is when a run happened: its execution time, else its
// scheduled time.
func runTime(executed, scheduled *metav1.Time) time.Time {
	switch {
	case executed != nil:
		return executed.Time
	case scheduled != nil:
		return scheduled.Time
	}
	return time.Time{}
}

func bounds(minR, maxR *int32) string {
	var parts []string
	if minR != nil {
		parts = append(parts, fmt.Sprintf("minReplicas %d", *minR))
	}
	if maxR != nil {
		parts = append(parts, fmt.Sprintf("maxReplicas %d", *maxR))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Sparkline geometry: the chart's size and the room kept at its edges so
// that the line is not cut.
const (
	sparkWidth, sparkHeight = 240, 40
	sparkPad                = 2
)

// sparkline draws the replicas the history set, as steps: each count holds
// until the next, the last until now. The y axis runs from 0 to the
// highest of max and the counts; the x axis from the first entry to now.
func sparkline(h []HistoryEntry, maxReplicas int32, now time.Time) *Sparkline {
	var steps []HistoryEntry
	for _, e := range h {
		if e.To >= 0 && !e.Failed {
			steps = append(steps, e)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	top := max(maxReplicas, 1)
	for _, e := range steps {
		top = max(top, e.To, e.From)
	}
	start, end := steps[0].Time, now
	if last := steps[len(steps)-1].Time; end.Before(last) {
		end = last
	}
	span := end.Sub(start).Seconds()
	x := func(t time.Time) float64 {
		if span <= 0 {
			return sparkPad
		}
		return sparkPad + t.Sub(start).Seconds()/span*(sparkWidth-2*sparkPad)
	}
	y := func(n int32) float64 {
		return sparkPad + float64(top-n)/float64(top)*(sparkHeight-2*sparkPad)
	}
	var pts []string
	// A point where the last one is adds nothing: many rescales within one
	// pixel's time draw as one vertical stroke.
	add := func(px float64, n int32) {
		if p := fmt.Sprintf("%.1f,%.1f", px, y(n)); len(pts) == 0 || pts[len(pts)-1] != p {
			pts = append(pts, p)
		}
	}
	first, low, high := steps[0].To, steps[0].To, steps[0].To
	if steps[0].From >= 0 {
		add(x(start), steps[0].From)
		first, low, high = steps[0].From, min(low, steps[0].From), max(high, steps[0].From)
	}
	for i, e := range steps {
		if i > 0 {
			add(x(e.Time), steps[i-1].To)
		}
		add(x(e.Time), e.To)
		low, high = min(low, e.To), max(high, e.To)
	}
	last := steps[len(steps)-1].To
	endX := x(end)
	if span <= 0 {
		endX = sparkWidth - sparkPad
	}
	add(endX, last)
	return &Sparkline{Width: sparkWidth, Height: sparkHeight, Points: strings.Join(pts, " "), Max: top,
		Label: fmt.Sprintf("replicas from %d to %d in %d change%s between %s and %s, lowest %d, highest %d (the chart's top is %d)",
			first, last, len(steps), plural(len(steps)), start.UTC().Format("2006-01-02 15:04:05Z"), end.UTC().Format("2006-01-02 15:04:05Z"), low, high, top)}
}

// buildSchedule is a CronFederatedHPA's row: its rules, in the spec's
// order, each with its next and latest run.
func buildSchedule(c *autoscalingv1alpha1.CronFederatedHPA) ScheduleRow {
	ref := c.Spec.ScaleTargetRef
	row := ScheduleRow{Namespace: c.Namespace, Name: c.Name, Target: ref.Kind + "/" + ref.Name}
	hist := map[string]autoscalingv1alpha1.ExecutionHistory{}
	for _, eh := range c.Status.ExecutionHistories {
		hist[eh.RuleName] = eh
	}
	for _, rule := range c.Spec.Rules {
		sr := ScheduleRule{Name: rule.Name, Schedule: rule.Schedule, TimeZone: ptr.Deref(rule.TimeZone, ""), Suspended: ptr.Deref(rule.Suspend, false)}
		if rule.TargetReplicas != nil {
			sr.Sets = fmt.Sprintf("replicas %d", *rule.TargetReplicas)
		} else {
			sr.Sets = bounds(rule.TargetMinReplicas, rule.TargetMaxReplicas)
		}
		eh := hist[rule.Name]
		if eh.NextExecutionTime != nil {
			sr.Next = &eh.NextExecutionTime.Time
		}
		for _, e := range cronEntries(c.Name, eh) {
			if sr.Last == nil || e.Time.After(sr.Last.Time) {
				sr.Last = &e
			}
		}
		row.Rules = append(row.Rules, sr)
	}
	return row
}
