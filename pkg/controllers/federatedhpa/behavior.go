package federatedhpa

import (
	"fmt"
	"math"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
)

// DefaultDownscaleWindow is the scale-down stabilization window of a
// behavior that sets none, a HorizontalPodAutoscaler's default.
const DefaultDownscaleWindow = 300 * time.Second

// recommendation is a count the metrics asked for at a time.
type recommendation struct {
	at       time.Time
	replicas int32
}

// scaleEvent is a change written to the target.
type scaleEvent struct {
	at     time.Time
	change int32
}

// history is what the behavior rules look back on, per FederatedHPA.
type history struct {
	recommendations []recommendation
	ups, downs      []scaleEvent
}

// record adds a written change from prev to next replicas.
func (h history) record(prev, next int32, now time.Time) history {
	switch {
	case next > prev:
		h.ups = append(h.ups, scaleEvent{now, next - prev})
	case next < prev:
		h.downs = append(h.downs, scaleEvent{now, prev - next})
	}
	return h
}

// prune drops what no rule looks at any more.
func (h history) prune(b autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) history {
	longest := func(r *autoscalingv2.HPAScalingRules) int32 {
		l := int32(0)
		for _, p := range r.Policies {
			l = max(l, p.PeriodSeconds)
		}
		return l
	}
	keep := func(evs []scaleEvent, secs int32) []scaleEvent {
		var out []scaleEvent
		for _, e := range evs {
			if e.at.After(now.Add(-time.Duration(secs) * time.Second)) {
				out = append(out, e)
			}
		}
		return out
	}
	window := max(*b.ScaleUp.StabilizationWindowSeconds, *b.ScaleDown.StabilizationWindowSeconds)
	var recs []recommendation
	for _, r := range h.recommendations {
		if !r.at.Before(now.Add(-time.Duration(window) * time.Second)) {
			recs = append(recs, r)
		}
	}
	period := max(longest(b.ScaleUp), longest(b.ScaleDown))
	return history{recommendations: recs, ups: keep(h.ups, period), downs: keep(h.downs, period)}
}

// withDefaults fills what b leaves unset as a HorizontalPodAutoscaler's
// behavior defaults: scale up by 4 pods or 100% every 15 s, whichever is
// more, at once; scale down by up to 100% every 15 s after a window of
// downWindow.
func withDefaults(b *autoscalingv2.HorizontalPodAutoscalerBehavior, downWindow time.Duration) autoscalingv2.HorizontalPodAutoscalerBehavior {
	var out autoscalingv2.HorizontalPodAutoscalerBehavior
	if b != nil {
		out = *b.DeepCopy()
	}
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	if out.ScaleUp == nil {
		out.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleUp.StabilizationWindowSeconds == nil {
		out.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	if out.ScaleUp.SelectPolicy == nil {
		out.ScaleUp.SelectPolicy = &maxPolicy
	}
	if len(out.ScaleUp.Policies) == 0 {
		out.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
	if out.ScaleDown == nil {
		out.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		out.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(downWindow / time.Second))
	}
	if out.ScaleDown.SelectPolicy == nil {
		out.ScaleDown.SelectPolicy = &maxPolicy
	}
	if len(out.ScaleDown.Policies) == 0 {
		out.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
	return out
}

// changed sums the changes of evs within the last secs seconds.
func changed(evs []scaleEvent, secs int32, now time.Time) int32 {
	var n int32
	for _, e := range evs {
		if e.at.After(now.Add(-time.Duration(secs) * time.Second)) {
			n += e.change
		}
	}
	return n
}

// upLimit is the most the scale-up rules allow now.
func upLimit(current int32, h history, r *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pickMin := *r.SelectPolicy == autoscalingv2.MinChangePolicySelect
	result := int32(math.MinInt32)
	if pickMin {
		result = math.MaxInt32
	}
	for _, p := range r.Policies {
		start := current - changed(h.ups, p.PeriodSeconds, now) + changed(h.downs, p.PeriodSeconds, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start + p.Value
		} else {
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if pickMin {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

// downLimit is the least the scale-down rules allow now.
func downLimit(current int32, h history, r *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pickMin := *r.SelectPolicy == autoscalingv2.MinChangePolicySelect // the smallest change: the highest count
	result := int32(math.MaxInt32)
	if pickMin {
		result = math.MinInt32
	}
	for _, p := range r.Policies {
		start := current - changed(h.ups, p.PeriodSeconds, now) + changed(h.downs, p.PeriodSeconds, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start - p.Value
		} else {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if pickMin {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}

// condition is one of the FederatedHPA's conditions, as decided.
type condition struct {
	kind            autoscalingv2.HorizontalPodAutoscalerConditionType
	status          corev1.ConditionStatus
	reason, message string
}

// normalize applies behavior to the metrics' count: the stabilization
// window of its direction (the lowest recent count on a scale-up, the
// highest on a scale-down), then the rate policies and the bounds. It
// returns the count, the AbleToScale and ScalingLimited conditions and the
// history with this recommendation.
func normalize(b autoscalingv2.HorizontalPodAutoscalerBehavior, minR, maxR, current, proposed int32, h history, now time.Time) (int32, []condition, history) {
	up := proposed >= current
	rules, reason, msg := b.ScaleDown, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
	if up {
		rules, reason, msg = b.ScaleUp, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	stable := proposed
	cutoff := now.Add(-time.Duration(*rules.StabilizationWindowSeconds) * time.Second)
	for _, r := range h.recommendations {
		if r.at.After(cutoff) {
			if up {
				stable = min(stable, r.replicas)
			} else {
				stable = max(stable, r.replicas)
			}
		}
	}
	h.recommendations = append(h.recommendations, recommendation{now, proposed})
	able := condition{autoscalingv1alpha1.ConditionAbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size"}
	if stable != proposed {
		able.reason, able.message = reason, msg
	}
	out, lreason, lmsg := stable, "DesiredWithinRange", "the desired count is within the acceptable range"
	switch {
	case stable > current:
		limit := max(upLimit(current, h, b.ScaleUp, now), current)
		allowed, why, m := maxR, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if limit < maxR {
			allowed, why, m = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if stable > allowed {
			out, lreason, lmsg = allowed, why, m
		}
	case stable < current:
		limit := min(downLimit(current, h, b.ScaleDown, now), current)
		allowed, why, m := minR, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if limit > minR {
			allowed, why, m = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if stable < allowed {
			out, lreason, lmsg = allowed, why, m
		}
	}
	limited := condition{autoscalingv1alpha1.ConditionScalingLimited, corev1.ConditionFalse, lreason, lmsg}
	if out != stable {
		limited.status = corev1.ConditionTrue
	}
	return out, []condition{able, limited}, h
}

// input is everything decide reads.
type input struct {
	spec autoscalingv1alpha1.FederatedHPASpec
	// current is the template's spec.replicas, status its replicas running.
	current, status int32
	clusters        []cluster
	history         history
	now             time.Time
	tolerance       float64
	downWindow      time.Duration
	// unplaced is the scheduler's reason when it could not place the
	// target's current replicas (see placementFrom).
	unplaced string
}

// outcome is what decide concludes.
type outcome struct {
	desired int32
	// reason says why the count changes (empty: it does not).
	reason     string
	statuses   []autoscalingv2.MetricStatus
	conditions []condition
	clusters   []autoscalingv1alpha1.ClusterUtilization
	history    history
}

// decide computes a FederatedHPA's count as a HorizontalPodAutoscaler
// does: out-of-bounds counts first, then the highest count of the metrics
// (clusters whose metrics are missing or stale left out and named), the
// behavior and the bounds. Pure: every input is in in.
func decide(in input) outcome {
	minR := ptr.Deref(in.spec.MinReplicas, 1)
	b := withDefaults(in.spec.Behavior, in.downWindow)
	metrics := in.spec.Metrics
	if len(metrics) == 0 {
		metrics = defaultMetrics()
	}
	o := outcome{desired: in.current, history: in.history.prune(b, in.now), clusters: utilizations(metrics, in.clusters)}
	active := func(status corev1.ConditionStatus, reason, msg string) {
		o.conditions = append(o.conditions, condition{autoscalingv1alpha1.ConditionScalingActive, status, reason, msg})
	}
	switch {
	case in.current == 0 && minR != 0:
		o.desired = 0
		active(corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		return o
	case in.current > in.spec.MaxReplicas:
		o.desired, o.reason = in.spec.MaxReplicas, "Current number of replicas above spec.maxReplicas"
		active(corev1.ConditionTrue, "ValidMetricFound", "the replica count is brought within the bounds")
		o.conditions = append(o.conditions, condition{autoscalingv1alpha1.ConditionScalingLimited, corev1.ConditionTrue, "TooManyReplicas", "the desired replica count is more than the maximum replica count"})
		return o
	case in.current < minR:
		o.desired, o.reason = minR, "Current number of replicas below spec.minReplicas"
		active(corev1.ConditionTrue, "ValidMetricFound", "the replica count is brought within the bounds")
		o.conditions = append(o.conditions, condition{autoscalingv1alpha1.ConditionScalingLimited, corev1.ConditionTrue, "TooFewReplicas", "the desired replica count is less than the minimum replica count"})
		return o
	}
	p := propose(metrics, in.current, in.status, in.clusters, tolerancesOf(in.spec.Behavior, in.tolerance))
	o.statuses = p.statuses
	if p.err != "" {
		active(corev1.ConditionFalse, "FailedGetMetrics", "the HPA was unable to compute the replica count: "+p.err+excludedNote(p.excluded))
		return o
	}
	active(corev1.ConditionTrue, "ValidMetricFound", fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s%s", p.metric, excludedNote(p.excluded)))
	var conds []condition
	o.desired, conds, o.history = normalize(b, minR, in.spec.MaxReplicas, in.current, p.replicas, o.history, in.now)
	roomLimited(conds, in.current, in.unplaced)
	o.conditions = append(o.conditions, conds...)
	if o.desired != in.current {
		dir := "above"
		if o.desired < in.current {
			dir = "below"
		}
		o.reason = fmt.Sprintf("%s %s target", p.metric, dir)
	}
	return o
}

// excludedNote names the clusters left out of the average.
func excludedNote(excluded []string) string {
	if len(excluded) == 0 {
		return ""
	}
	return "; left out of the average (and no scale-down while they are): " + strings.Join(excluded, ", ")
}
